//! The retry and fallback table of seed 003 §4, as pure decisions over typed errors.
//!
//! | what failed                                   | retries | then                                  |
//! |-----------------------------------------------|--------:|---------------------------------------|
//! | API error (HTTP 5xx but 501/505, 408, 429)     | 1       | the error                             |
//! | network / other (refused, reset, cut, garbage) | 1       | the error                             |
//! | a stream, at its start (after its one retry) or midway | 0 | one non-stream call              |
//! | that non-stream fallback call                  | 0       | the error at once                     |
//! | a refusal the server understood (other 4xx, missing model, bad endpoint) | 0 | the error (a second try gets the same answer) |
//! | a time limit (first token, whole response)     | 0       | the error — no fallback after a first-token timeout (a slow server is slower still without streaming) |
//! | a body past the size limit (`TooLarge`)        | 0       | the error (the same server floods again) |
//!
//! A non-streamed call (`Client::chat`: judge calls) is rows 1–2 around the whole call.

use super::error::{LlmError, TimeoutPhase};

/// Which row of the table an error falls in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Row {
    /// The server answered with a failure it may not repeat.
    ApiError,
    /// The connection or the bytes on it failed.
    Network,
    /// The server understood the request and refused it.
    Refused,
    /// A time limit ran out.
    TimedOut(TimeoutPhase),
}

pub fn row(e: &LlmError) -> Row {
    match e {
        LlmError::Server { status, .. } if !matches!(status, 501 | 505) => Row::ApiError,
        LlmError::Rejected {
            status: 408 | 429, ..
        } => Row::ApiError,
        LlmError::Server { .. }
        | LlmError::Rejected { .. }
        | LlmError::ModelNotFound { .. }
        | LlmError::BadEndpoint { .. }
        | LlmError::UnknownApi { .. }
        | LlmError::TooLarge { .. } => Row::Refused,
        LlmError::Timeout { phase, .. } => Row::TimedOut(*phase),
        LlmError::Connect { .. }
        | LlmError::Malformed { .. }
        | LlmError::StreamError { .. }
        | LlmError::Interrupted { .. } => Row::Network,
    }
}

/// Rows 1–2: worth exactly one retry after the backoff.
pub fn retried(e: &LlmError) -> bool {
    matches!(row(e), Row::ApiError | Row::Network)
}

/// Row 3: a failed stream (at its start or midway) is replaced by one non-stream call.
pub fn falls_back(e: &LlmError) -> bool {
    match row(e) {
        Row::ApiError | Row::Network => true,
        Row::TimedOut(phase) => phase != TimeoutPhase::FirstToken,
        Row::Refused => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(status: u16) -> LlmError {
        LlmError::Server {
            status,
            url: "u".into(),
            model: "m".into(),
            message: String::new(),
        }
    }
    fn rejected(status: u16) -> LlmError {
        LlmError::Rejected {
            status,
            url: "u".into(),
            model: "m".into(),
            message: String::new(),
        }
    }
    fn timeout(phase: TimeoutPhase) -> LlmError {
        LlmError::Timeout {
            url: "u".into(),
            model: "m".into(),
            phase,
            after: std::time::Duration::from_secs(1),
        }
    }

    #[test]
    fn every_status_lands_in_one_row() {
        for status in 400..600u16 {
            let e = if status >= 500 {
                server(status)
            } else {
                rejected(status)
            };
            let api =
                (status >= 500 && status != 501 && status != 505) || [408, 429].contains(&status);
            assert_eq!(retried(&e), api, "{status}");
            assert_eq!(falls_back(&e), api, "{status}");
        }
    }

    #[test]
    fn network_failures_retry_and_fall_back_timeouts_do_not_retry() {
        let cut = LlmError::Interrupted {
            url: "u".into(),
            model: "m".into(),
            detail: "closed".into(),
        };
        assert!(retried(&cut) && falls_back(&cut));
        for phase in [
            TimeoutPhase::Connect,
            TimeoutPhase::FirstToken,
            TimeoutPhase::Idle,
            TimeoutPhase::Response,
        ] {
            assert!(!retried(&timeout(phase)));
            assert_eq!(
                falls_back(&timeout(phase)),
                phase != TimeoutPhase::FirstToken
            );
        }
    }
}
