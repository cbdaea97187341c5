/** chatmend: make any tool-calling chat history valid to send, the same way every time (the same bytes as the
 * Python library, proven by the shared conformance suite in conformance/). */

export type {
  ChatMessage,
  FilePart,
  ImagePart,
  JsonValue,
  NativePart,
  Part,
  ProviderData,
  Role,
  TextPart,
  ThinkingPart,
  ToolCall,
} from "./messages.js";
export { canonicalMessage, HistoryError, sortedJson } from "./messages.js";
export type { RenamedId } from "./planner.js";
export type { IsReadOnly, RepairOptions, RepairResult, Wording } from "./repair.js";
export { orphanNote, repairHistory, syntheticText } from "./repair.js";
export type { BodyRepair, BodyReport, ProviderName, RepairBodyOptions } from "./providers.js";
export { PROVIDERS, repairBody, UnsupportedBodyError } from "./providers.js";
export type { CheckOptions, Problem } from "./check.js";
export { check } from "./check.js";
export { normalizeToolId } from "./ids.js";
export { FinalIds } from "./planner.js";
