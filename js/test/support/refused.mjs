// Cases whose repair the package refuses by name (UnsupportedBodyError), by provider: bodies of shapes its readers and
// writers do not take where Python's do. The body tests check that repairBody refuses each and compare its check with
// Python's; every other case must pass byte for byte.
export const REFUSED = {};
