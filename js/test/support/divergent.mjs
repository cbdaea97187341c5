// Generated vocabulary bodies (conformance/generate.py, "vocabulary generated N") where the package does not yet
// give Python's bytes, each a gap to close: Gemini lists
// Python writes whole for GE10 (a model before Gemini 3 given a response's media: not ported), and Responses lists
// where a result comes a round late or a computer call's output is lost (Python's neutral runs; the package's
// hooks write function calls only, and refuse the rest by name). The body tests skip these by name and print how
// many; every other case must pass.
export const DIVERGENT = {
  "openai_responses": [
    "vocabulary generated 1",
    "vocabulary generated 4",
    "vocabulary generated 20",
    "vocabulary generated 29",
    "vocabulary generated 44",
    "vocabulary generated 45",
    "vocabulary generated 46",
    "vocabulary generated 54"
  ],
  "gemini": [
    "vocabulary generated 16",
    "vocabulary generated 21",
    "vocabulary generated 30",
    "vocabulary generated 31",
    "vocabulary generated 35",
    "vocabulary generated 55"
  ]
};
