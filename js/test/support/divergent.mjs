// Generated bodies (conformance/generate.py) where the package does not yet give Python's result, each a gap to
// close, by provider. The body tests skip these by name and print how many; every other case must pass.
export const DIVERGENT = {
  // the same bytes and report, but Python counts as rewritten a kept item its runs write anew between new items
  openai_responses: ["client calls with reasoning generated 10"],
};
