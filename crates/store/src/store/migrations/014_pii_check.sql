-- 014: the LINE bot's PII second opinion (issue 26 §1, seed 003 §6). A user message's
-- text_masked is first the rules' result (at the door, before the acknowledgement); a worker
-- then asks the model and stores the union. pii_check records that pass:
--   ''       not run (the pass is off, or the message is not text)
--   'llm'    the model was asked and its answer merged
--   'failed' the model could not be asked or read: the text is not sent to a model, and
--            the message is marked for review (fail closed)
--   'open'   the model could not check it and the operator chose fail-open: the rules'
--            result was used
ALTER TABLE line_messages ADD COLUMN pii_check TEXT NOT NULL DEFAULT '';
