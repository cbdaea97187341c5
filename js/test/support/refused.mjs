// Cases whose repair the package refuses by name (UnsupportedBodyError), by provider: bodies of shapes its readers and
// writers do not take where Python's do, or whose Python repair loses what the body held (not ported). The body tests
// check that repairBody refuses each and compare its check with Python's; every other case must pass byte for byte.
export const REFUSED = {
  openai_chat: [
    // Python's Chat writer writes a result whose images or files it moves as its text: a part of a type its reader
    // does not name beside them is lost (`_write_result`)
    "chat media: a result's file beside a part of another type, the call renamed and a later call cut off",
    // Python's `_write_items` leaves out the synthetic result of a legacy call cut off, where the message with the
    // call or a result kept after it holds images or files (the run's lead, counted as written alone): the call is
    // left unanswered, its moved parts sent twice
    "chat media: a legacy call cut off after a kept result's audio",
    "chat media generated 21",
  ],
};
