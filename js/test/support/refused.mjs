// Cases whose repair the package refuses by name (UnsupportedBodyError: the body takes Python's neutral route
// and holds parts the package's neutral reader does not read: a thought, a thought signature, code, media, a part of
// no data or of two kinds, a response without a name or not an object, a role other than user and model, snake_case
// fields). The body tests check that repairBody refuses each, and compare its check with Python's; every other case
// must pass byte for byte. Closing one: port what Python's Gemini reader and writer do with those parts.
export const REFUSED = {
  gemini: [
    "call without id, code: a response too many",
    "call without id, code: a response too many, Gemini 3",
    "call without id, code: answer after words",
    "call without id, code: answer after words, Gemini 3",
    "call without id, code: answers out of order",
    "call without id, code: answers out of order, Gemini 3",
    "call without id, code: two model turns in a row",
    "call without id, code: two model turns in a row, Gemini 3",
    "call without id, signed: a response too many",
    "call without id, signed: a response too many, Gemini 3",
    "call without id, signed: answer after words",
    "call without id, signed: answer after words, Gemini 3",
    "call without id, signed: answers out of order",
    "call without id, signed: answers out of order, Gemini 3",
    "call without id, signed: two model turns in a row",
    "call without id, signed: two model turns in a row, Gemini 3",
    "call without id, thought: a response too many",
    "call without id, thought: a response too many, Gemini 3",
    "call without id, thought: answer after words",
    "call without id, thought: answer after words, Gemini 3",
    "call without id, thought: answers out of order",
    "call without id, thought: answers out of order, Gemini 3",
    "call without id, thought: two model turns in a row",
    "call without id, thought: two model turns in a row, Gemini 3",
    "check: GE0 a part of no data",
    "check: GE0 a part of two kinds",
    "check: GE0 a response not an object",
    "check: GE0 args not an object",
    "check: GE5 a response with no name field",
    "check: GE5 a response without a name",
    "check: GE7 a function role",
    "check: GE7 a system content",
    "check: GE7 an unknown role",
    "check: a kind of part newer than chatmend",
    "check: snake_case fields",
  ],
};
