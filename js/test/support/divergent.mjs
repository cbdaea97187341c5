// Generated vocabulary bodies (conformance/generate.py, "vocabulary generated N") where the package does not yet
// give Python's bytes, each a gap to close: Responses lists where a computer call's output is lost (the package's
// hooks write function calls only, and refuse the rest by name). The body tests skip these by name and print how
// many; every other case must pass.
export const DIVERGENT = {
  "openai_responses": [
    "vocabulary generated 4",
    "vocabulary generated 29",
    "vocabulary generated 44",
    "vocabulary generated 45"
  ]
};
