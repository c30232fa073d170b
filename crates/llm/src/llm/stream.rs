//! One streamed reply, decoded synchronously: network chunks in, text deltas and the finish
//! state out. The async client only moves bytes and enforces time limits around this.

use std::ops::ControlFlow;

use super::framing::{Accumulator, LineSplitter, Utf8Decoder};
use super::protocol::{LineError, Protocol};
use super::types::Finish;

/// What the caller should do after feeding a chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Keep reading.
    More,
    /// The protocol's end marker arrived.
    Done,
    /// The character cap was exceeded: stop reading and drop the response.
    Capped,
}

/// A stream line the protocol refused, with the line for the error message.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamLineError {
    pub error: LineError,
    pub line: String,
}

struct State {
    acc: Accumulator,
    finish: Option<Finish>,
    tokens: Option<u32>,
    prompt_tokens: Option<u32>,
    deltas: u32,
    got_text: bool,
}

pub struct StreamDecoder<'p> {
    proto: &'p dyn Protocol,
    utf8: Utf8Decoder,
    lines: LineSplitter,
    state: State,
}

impl<'p> StreamDecoder<'p> {
    /// `cap`: the character cap, `None` for uncapped (judge) calls.
    pub fn new(proto: &'p dyn Protocol, cap: Option<usize>) -> StreamDecoder<'p> {
        StreamDecoder {
            proto,
            utf8: Utf8Decoder::new(),
            lines: LineSplitter::new(),
            state: State {
                acc: Accumulator::new(cap),
                finish: None,
                tokens: None,
                prompt_tokens: None,
                deltas: 0,
                got_text: false,
            },
        }
    }

    /// Feeds one network chunk; `on_token` gets each text delta before the cap decision.
    pub fn feed(
        &mut self,
        bytes: &[u8],
        on_token: &mut dyn FnMut(&str),
    ) -> Result<Step, StreamLineError> {
        let text = self.utf8.push(bytes);
        let proto = self.proto;
        let state = &mut self.state;
        let flow = self
            .lines
            .push(text, |line| handle_line(proto, state, line, on_token));
        match flow {
            ControlFlow::Continue(()) => Ok(Step::More),
            ControlFlow::Break(r) => r,
        }
    }

    /// At end of body: handles an unterminated last line. `Ok(Step::More)` means the stream
    /// ended without its end marker or finish reason (it was cut off).
    pub fn end(&mut self, on_token: &mut dyn FnMut(&str)) -> Result<Step, StreamLineError> {
        let mut rest = self.lines.take_rest().unwrap_or_default();
        if let Some(c) = self.utf8.finish() {
            rest.push(c);
        }
        if !rest.is_empty()
            && let ControlFlow::Break(r) = handle_line(self.proto, &mut self.state, &rest, on_token)
        {
            return r;
        }
        // SSE servers may close after the finish chunk without `[DONE]`.
        Ok(if self.state.finish.is_some() {
            Step::Done
        } else {
            Step::More
        })
    }

    /// Whether any text has arrived (the first-token clock stops then).
    pub fn got_text(&self) -> bool {
        self.state.got_text
    }

    pub fn raw(&self) -> &str {
        self.state.acc.raw()
    }

    pub fn finish(&self) -> Option<Finish> {
        self.state.finish
    }

    /// The server's token count, else the number of deltas received.
    pub fn tokens(&self) -> u32 {
        self.state.tokens.unwrap_or(self.state.deltas)
    }

    /// The server's count of prompt tokens, when it sent one.
    pub fn prompt_tokens(&self) -> Option<u32> {
        self.state.prompt_tokens
    }

    pub fn into_raw(self) -> String {
        self.state.acc.into_raw()
    }
}

fn handle_line(
    proto: &dyn Protocol,
    st: &mut State,
    line: &str,
    on_token: &mut dyn FnMut(&str),
) -> ControlFlow<Result<Step, StreamLineError>> {
    let chunk = match proto.parse_line(line) {
        Ok(Some(c)) => c,
        Ok(None) => return ControlFlow::Continue(()),
        Err(error) => {
            return ControlFlow::Break(Err(StreamLineError {
                error,
                line: line.to_string(),
            }));
        }
    };
    if chunk.tokens.is_some() {
        st.tokens = chunk.tokens;
    }
    if chunk.prompt_tokens.is_some() {
        st.prompt_tokens = chunk.prompt_tokens;
    }
    if chunk.finish.is_some() {
        st.finish = chunk.finish;
    }
    if let Some(delta) = chunk.delta.as_deref() {
        st.got_text = true;
        st.deltas += 1;
        on_token(delta);
        if st.acc.push(delta) {
            return ControlFlow::Break(Ok(Step::Capped));
        }
    }
    if chunk.done {
        return ControlFlow::Break(Ok(Step::Done));
    }
    ControlFlow::Continue(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::ollama::Ollama;
    use crate::llm::openai::OpenAi;

    fn run(
        proto: &dyn Protocol,
        cap: Option<usize>,
        chunks: &[&[u8]],
    ) -> (Vec<String>, Step, String) {
        let mut d = StreamDecoder::new(proto, cap);
        let mut seen = Vec::new();
        let mut on = |t: &str| seen.push(t.to_string());
        let mut step = Step::More;
        for c in chunks {
            step = d.feed(c, &mut on).unwrap();
            if step != Step::More {
                break;
            }
        }
        if step == Step::More {
            step = d.end(&mut on).unwrap();
        }
        (seen, step, d.into_raw())
    }

    #[test]
    fn sse_with_a_character_split_across_chunks() {
        let body = "data: {\"choices\":[{\"delta\":{\"content\":\"姉\"}}]}\n\ndata: {\"choices\":[{\"delta\":{\"content\":\"さん\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";
        let bytes = body.as_bytes();
        let at = body.find('姉').unwrap() + 1;
        let (seen, step, raw) = run(&OpenAi, None, &[&bytes[..at], &bytes[at..]]);
        assert_eq!(seen, vec!["姉", "さん"]);
        assert_eq!(step, Step::Done);
        assert_eq!(raw, "姉さん");
    }

    #[test]
    fn ndjson_without_trailing_newline_is_finished_at_end() {
        let body = "{\"message\":{\"content\":\"うん\"},\"done\":false}\n{\"message\":{\"content\":\"\"},\"done\":true,\"done_reason\":\"stop\",\"eval_count\":2}";
        let (_, step, raw) = run(&Ollama, None, &[body.as_bytes()]);
        assert_eq!(step, Step::Done);
        assert_eq!(raw, "うん");
    }

    #[test]
    fn cut_off_stream_reports_more() {
        let body = "{\"message\":{\"content\":\"うん\"},\"done\":false}\n{\"message\":{\"con";
        let mut d = StreamDecoder::new(&Ollama, None);
        let mut on = |_: &str| {};
        assert_eq!(d.feed(body.as_bytes(), &mut on), Ok(Step::More));
        assert!(d.end(&mut on).is_err());
    }

    #[test]
    fn cap_stops_at_the_delta_that_crosses_it() {
        let line = |t: &str| format!("{{\"message\":{{\"content\":\"{t}\"}},\"done\":false}}\n");
        let body: String = ["あい", "うえ", "お", "かき"]
            .iter()
            .map(|t| line(t))
            .collect();
        let (seen, step, raw) = run(&Ollama, Some(4), &[body.as_bytes()]);
        assert_eq!(seen, vec!["あい", "うえ", "お"]);
        assert_eq!(step, Step::Capped);
        assert_eq!(raw, "あいうえお");
    }
}
