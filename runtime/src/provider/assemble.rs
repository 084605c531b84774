//! A streamed answer put back together, whatever the provider: text as it
//! comes, tool calls opened by a provider's key for them (OpenAI's
//! `tool_calls[].index`, Anthropic's content block `index`) and their
//! argument text appended fragment by fragment, then the whole [`Response`].
//!
//! Fragments are pieces of the argument text as the model wrote it, already
//! decoded from the event's JSON, so they may end anywhere (mid-string,
//! mid-escape, mid-number) and several calls may be open at once; each is
//! appended to its own call, and nothing reads a fragment on its own.

use std::collections::{HashMap, VecDeque};

use futures::future::BoxFuture;
use futures::stream::{self, BoxStream, StreamExt};
use serde_json::Value;

use super::http::{malformed, too_long, Answer, Transport};
use super::sse::{Decoder, Event};
use crate::model::{ModelError, Reasoning, Response, StopReason, StreamEvent, Usage};
use crate::reader::ToolCall;

/// One call being streamed.
#[derive(Debug)]
struct Partial {
    id: Option<String>,
    name: String,
    arguments: String,
    /// Arguments given whole when the call opened (Anthropic's `input`),
    /// used when no fragment follows.
    given: Option<String>,
}

/// A block this crate does not read (Anthropic's server tools, kinds added
/// later), kept as it opened, with the input text streamed into it.
#[derive(Debug)]
struct Unread {
    block: Value,
    input: String,
}

/// What a provider's key for a part of the answer stands for.
#[derive(Clone, Copy, Debug)]
enum Slot {
    /// A tool call, its position in `calls`.
    Call(usize),
    /// A reasoning block, its position in `reasoning`.
    Reasoning(usize),
    /// A block not read, its position in `unread`.
    Unread(usize),
}

/// A streamed answer so far, and the events not yet handed out.
#[derive(Debug)]
pub(crate) struct Assembly {
    text: String,
    reasoning: Vec<Reasoning>,
    /// Reasoning streamed with no block of its own (OpenAI-compatible
    /// `reasoning_content`) goes on in the last part while this holds.
    loose_reasoning: bool,
    calls: Vec<Partial>,
    unread: Vec<Unread>,
    /// The provider's key of each open part: looked up once per fragment,
    /// so that assembly stays linear in the number of calls.
    keys: HashMap<u64, Slot>,
    usage: Usage,
    /// Whether the provider reported any usage.
    usage_seen: bool,
    stop: Option<StopReason>,
    events: VecDeque<StreamEvent>,
    /// Bytes of text and arguments so far, and the most allowed.
    size: usize,
    limit: usize,
    /// The most calls one answer may make.
    max_calls: usize,
}

impl Assembly {
    pub(crate) fn new(limit: usize) -> Assembly {
        Assembly {
            text: String::new(),
            reasoning: Vec::new(),
            loose_reasoning: false,
            calls: Vec::new(),
            unread: Vec::new(),
            keys: HashMap::new(),
            usage: Usage::default(),
            usage_seen: false,
            stop: None,
            events: VecDeque::new(),
            size: 0,
            limit,
            max_calls: usize::MAX,
        }
    }

    /// At most `max` calls in the answer: one more is an error naming the
    /// limit.
    pub(crate) fn max_calls(mut self, max: usize) -> Assembly {
        self.max_calls = max;
        self
    }

    fn grow(&mut self, bytes: usize) -> Result<(), ModelError> {
        self.size = self.size.saturating_add(bytes);
        match self.size > self.limit {
            true => Err(too_long(self.limit, self.text.as_bytes())),
            false => Ok(()),
        }
    }

    /// More of the answer's text.
    pub(crate) fn text(&mut self, piece: &str) -> Result<(), ModelError> {
        if piece.is_empty() {
            return Ok(());
        }
        self.grow(piece.len())?;
        self.text.push_str(piece);
        self.events.push_back(StreamEvent::Text(piece.to_owned()));
        Ok(())
    }

    /// More reasoning: of the block under `key` (opened with
    /// [`reasoning_block`](Self::reasoning_block)), or, with no key, of the
    /// reasoning streamed beside the text (OpenAI-compatible servers).
    pub(crate) fn reasoning(&mut self, key: Option<u64>, piece: &str) -> Result<(), ModelError> {
        if piece.is_empty() {
            return Ok(());
        }
        let at = match key.and_then(|key| self.keys.get(&key)) {
            Some(Slot::Reasoning(at)) => *at,
            Some(_) => return Ok(()),
            None if key.is_some() => return Ok(()),
            None => {
                if !self.loose_reasoning {
                    self.loose_reasoning = true;
                    self.reasoning.push(Reasoning::default());
                }
                self.reasoning.len() - 1
            }
        };
        self.grow(piece.len())?;
        self.reasoning[at].text.push_str(piece);
        self.events
            .push_back(StreamEvent::Reasoning(piece.to_owned()));
        Ok(())
    }

    /// A reasoning block under `key` opens (Anthropic's `thinking` and
    /// `redacted_thinking`), with what it opened with.
    pub(crate) fn reasoning_block(
        &mut self,
        key: u64,
        opened: Reasoning,
    ) -> Result<(), ModelError> {
        self.grow(opened.text.len() + opened.redacted.as_ref().map_or(0, String::len))?;
        let text = opened.text.clone();
        self.loose_reasoning = false;
        self.reasoning.push(opened);
        self.keys
            .insert(key, Slot::Reasoning(self.reasoning.len() - 1));
        if !text.is_empty() {
            self.events.push_back(StreamEvent::Reasoning(text));
        }
        Ok(())
    }

    /// The signature of the reasoning block under `key` (Anthropic's
    /// `signature_delta`); ignored for any other key.
    pub(crate) fn signature(&mut self, key: u64, piece: &str) -> Result<(), ModelError> {
        if let Some(Slot::Reasoning(at)) = self.keys.get(&key) {
            let at = *at;
            self.grow(piece.len())?;
            self.reasoning[at]
                .signature
                .get_or_insert_with(String::new)
                .push_str(piece);
        }
        Ok(())
    }

    /// A block this crate does not read opens under `key`: kept in
    /// [`Response::unread`], its streamed input with it.
    pub(crate) fn unread(&mut self, key: u64, block: Value) -> Result<(), ModelError> {
        self.grow(block.to_string().len())?;
        self.unread.push(Unread {
            block,
            input: String::new(),
        });
        self.keys.insert(key, Slot::Unread(self.unread.len() - 1));
        Ok(())
    }

    /// A call under `key`: opened if the key is new, or if it comes with an
    /// id other than the open call's (Ollama numbers every call of a
    /// parallel batch 0 and tells them apart by id alone); otherwise the open
    /// call, which takes the name if it had none yet.
    pub(crate) fn call(
        &mut self,
        key: u64,
        id: Option<&str>,
        name: Option<&str>,
    ) -> Result<(), ModelError> {
        let id = id.filter(|id| !id.is_empty());
        let name = name.unwrap_or_default();
        if let Some(Slot::Call(position)) = self.keys.get(&key) {
            let open = &mut self.calls[*position];
            let other_id = matches!((&open.id, id), (Some(open), Some(new)) if open != new);
            if !other_id {
                if open.name.is_empty() && !name.is_empty() {
                    open.name = name.to_owned();
                }
                return Ok(());
            }
        }
        self.grow(name.len() + id.map_or(0, str::len))?;
        let index = self.calls.len();
        if index >= self.max_calls {
            return Err(too_many_calls(self.max_calls, name.as_bytes()));
        }
        self.calls.push(Partial {
            id: id.map(str::to_owned),
            name: name.to_owned(),
            arguments: String::new(),
            given: None,
        });
        self.keys.insert(key, Slot::Call(index));
        self.events.push_back(StreamEvent::CallStarted {
            index,
            id: id.map(str::to_owned),
            name: name.to_owned(),
        });
        Ok(())
    }

    /// The arguments of the call under `key`, given whole as it opened.
    #[cfg_attr(
        not(feature = "anthropic"),
        allow(
            dead_code,
            reason = "only Anthropic's `tool_use` blocks open with arguments"
        )
    )]
    pub(crate) fn given(&mut self, key: u64, arguments: String) -> Result<(), ModelError> {
        self.grow(arguments.len())?;
        if let Some(Slot::Call(position)) = self.keys.get(&key) {
            self.calls[*position].given = Some(arguments);
        }
        Ok(())
    }

    /// More of the input text of the part under `key`: a call's arguments,
    /// or the input of a block this crate does not read. A key that never
    /// opened is a stream out of order.
    pub(crate) fn arguments(&mut self, key: u64, fragment: &str) -> Result<(), ModelError> {
        let Some(&slot) = self.keys.get(&key) else {
            return Err(malformed(
                format!("arguments for tool call {key}, which never started"),
                fragment.as_bytes(),
            ));
        };
        if fragment.is_empty() {
            return Ok(());
        }
        self.grow(fragment.len())?;
        match slot {
            Slot::Call(index) => {
                self.calls[index].arguments.push_str(fragment);
                self.events.push_back(StreamEvent::CallArguments {
                    index,
                    fragment: fragment.to_owned(),
                });
            }
            Slot::Unread(at) => self.unread[at].input.push_str(fragment),
            Slot::Reasoning(_) => {}
        }
        Ok(())
    }

    /// The tokens spent, as far as the provider has counted: each count
    /// given replaces the one before (both providers report totals so far).
    pub(crate) fn usage(&mut self, input: Option<u64>, output: Option<u64>) {
        if let Some(input) = input {
            self.usage.input_tokens = input;
            self.usage_seen = true;
        }
        if let Some(output) = output {
            self.usage.output_tokens = output;
            self.usage_seen = true;
        }
    }

    /// Why the model stopped. A refusal (OpenAI's `refusal` text) is not
    /// undone by the end of the turn that follows it.
    pub(crate) fn stop(&mut self, reason: StopReason) {
        if !(self.stop == Some(StopReason::Refused) && reason == StopReason::EndTurn) {
            self.stop = Some(reason);
        }
    }

    /// Whether the provider said why the model stopped.
    pub(crate) fn stopped(&self) -> bool {
        self.stop.is_some()
    }

    /// The whole answer: its calls in the order they opened, a call with no
    /// argument text taking `{}` (a tool without parameters).
    fn finish(&mut self) -> Response {
        let calls = std::mem::take(&mut self.calls)
            .into_iter()
            .map(|call| ToolCall {
                id: call.id,
                name: call.name,
                arguments: match (call.arguments.is_empty(), call.given) {
                    (false, _) => call.arguments,
                    (true, Some(given)) => given,
                    (true, None) => "{}".to_owned(),
                },
            })
            .collect();
        let unread = std::mem::take(&mut self.unread)
            .into_iter()
            .map(|Unread { mut block, input }| {
                if let (Value::Object(fields), false) = (&mut block, input.is_empty()) {
                    let input = serde_json::from_str(&input).unwrap_or(Value::String(input));
                    fields.insert("input".into(), input);
                }
                block
            })
            .collect();
        let mut response = finished(
            std::mem::take(&mut self.text),
            calls,
            self.usage_seen.then_some(self.usage),
            self.stop.take(),
        );
        response.reasoning = std::mem::take(&mut self.reasoning);
        response.unread = unread;
        response
    }
}

/// The error for an answer of more than `max` calls.
pub(crate) fn too_many_calls(max: usize, start: &[u8]) -> ModelError {
    malformed(
        format!(
            "the answer makes more than {max} tool calls, the most this client reads (`max_calls_per_answer`)"
        ),
        start,
    )
}

/// A response from its parts. A provider that gave no stop reason, or said
/// "stop" while calling tools (some local servers do), stopped to use tools
/// if it called any. Usage the provider did not report is marked
/// [`estimated`](Usage::estimated) (at zero, until the client estimates it
/// from the request and the answer: [`super::estimate_usage`]).
pub(crate) fn finished(
    text: String,
    calls: Vec<ToolCall>,
    usage: Option<Usage>,
    stop: Option<StopReason>,
) -> Response {
    let called = !calls.is_empty();
    let usage = usage.unwrap_or(Usage::estimate(0, 0));
    let response = Response::new(text).calls(calls).usage(usage);
    match stop {
        Some(StopReason::EndTurn) | None if called => response,
        Some(reason) => response.stop(reason),
        None => response,
    }
}

/// What a provider's event said about the stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Flow {
    /// More is coming.
    More,
    /// The answer is complete (`[DONE]`, `message_stop`).
    End,
}

/// A provider's reading of one server-sent event into the assembly.
pub(crate) type Parse = fn(&Event, &mut Assembly) -> Result<Flow, ModelError>;

enum State<'a> {
    Connecting(BoxFuture<'a, Result<Answer, ModelError>>),
    Reading(Box<(Answer, Decoding)>),
    Over,
}

/// A stream's bytes on their way to events: decoded, read by the
/// provider's `parse`, assembled.
#[derive(Debug)]
pub(crate) struct Decoding {
    decoder: Decoder,
    assembly: Assembly,
    parse: Parse,
    /// Bytes read so far, and the most allowed.
    read: usize,
    limit: usize,
    /// The provider's last event came, or the body ended.
    over: bool,
}

impl Decoding {
    pub(crate) fn new(parse: Parse, limit: usize, max_calls: usize) -> Decoding {
        Decoding {
            decoder: Decoder::default(),
            assembly: Assembly::new(limit).max_calls(max_calls),
            parse,
            read: 0,
            limit,
            over: false,
        }
    }

    /// Reads the next chunk of the body, or its end (`None`).
    pub(crate) fn feed(&mut self, chunk: Option<&[u8]>) -> Result<(), ModelError> {
        let mut decoded = Vec::new();
        match chunk {
            Some(chunk) => {
                self.read = self.read.saturating_add(chunk.len());
                if self.read > self.limit {
                    return Err(too_long(self.limit, chunk));
                }
                self.decoder.push(chunk, &mut decoded)?;
            }
            None => self.decoder.finish(&mut decoded)?,
        }
        for event in &decoded {
            if (self.parse)(event, &mut self.assembly)? == Flow::End {
                self.over = true;
                return Ok(());
            }
        }
        if chunk.is_none() {
            // The body ended without the provider's last event: complete
            // only if the provider said why the model stopped.
            if !self.assembly.stopped() {
                return Err(malformed(
                    "the stream ended before the answer did",
                    self.assembly.text.as_bytes(),
                ));
            }
            self.over = true;
        }
        Ok(())
    }

    /// The next event to hand out, if one is ready.
    fn event(&mut self) -> Option<StreamEvent> {
        self.assembly.events.pop_front()
    }

    /// The whole answer.
    pub(crate) fn finish(&mut self) -> Response {
        self.assembly.finish()
    }
}

/// The events of a streamed answer: `send` is the request (retried before
/// any event, as [`Transport::post`] does), `parse` reads each server-sent
/// event, and the last item is [`StreamEvent::Done`] or an error; usage
/// the stream did not report is estimated, the request counted as
/// `request_tokens`. An error
/// mid-stream is not retried: what was handed out cannot be taken back.
pub(crate) fn events<'a>(
    transport: &'a Transport,
    send: Result<BoxFuture<'a, Result<Answer, ModelError>>, ModelError>,
    parse: Parse,
    request_tokens: u64,
) -> BoxStream<'a, Result<StreamEvent, ModelError>> {
    let state = match send {
        Ok(send) => State::Connecting(send),
        Err(error) => return stream::once(async { Err(error) }).boxed(),
    };
    stream::unfold(state, move |state| async move {
        let mut reading = match state {
            State::Over => return None,
            State::Connecting(send) => match send.await {
                Ok(answer) => Box::new((
                    answer,
                    Decoding::new(parse, transport.max_response_bytes, transport.max_calls),
                )),
                Err(error) => return Some((Err(error), State::Over)),
            },
            State::Reading(reading) => reading,
        };
        let (answer, decoding) = &mut *reading;
        match next(transport, answer, decoding).await {
            Ok(Some(event)) => Some((Ok(event), State::Reading(reading))),
            Ok(None) => {
                let mut response = decoding.finish();
                super::estimate_usage(&mut response, request_tokens);
                Some((Ok(StreamEvent::Done(response)), State::Over))
            }
            Err(error) => Some((Err(error), State::Over)),
        }
    })
    .boxed()
}

/// The next event to hand out, or `None` when the answer is complete.
async fn next(
    transport: &Transport,
    answer: &mut Answer,
    decoding: &mut Decoding,
) -> Result<Option<StreamEvent>, ModelError> {
    loop {
        if let Some(event) = decoding.event() {
            return Ok(Some(event));
        }
        if decoding.over {
            return Ok(None);
        }
        let chunk = transport.chunk(answer).await?;
        decoding.feed(chunk.as_deref())?;
    }
}

/// The answer of a stream, for a client that streams under
/// [`Model::complete`](crate::model::Model::complete).
pub(crate) async fn collect(
    mut events: BoxStream<'_, Result<StreamEvent, ModelError>>,
) -> Result<Response, ModelError> {
    while let Some(event) = events.next().await {
        if let StreamEvent::Done(response) = event? {
            return Ok(response);
        }
    }
    Err(ModelError::Malformed {
        message: "the stream ended before the answer did".into(),
        body: String::new(),
    })
}

/// Reads the JSON of an event's data, or says it is not what was expected.
pub(crate) fn json<'de, T: serde::Deserialize<'de>>(event: &'de Event) -> Result<T, ModelError> {
    serde_json::from_str(&event.data).map_err(|error| {
        malformed(
            format!(
                "a `{}` event is not what the provider documents: {error}",
                event.kind
            ),
            event.data.as_bytes(),
        )
    })
}

/// A whole stream body read at once, as [`events`] reads it from the
/// network: for tests of the providers' parsing without a server.
#[cfg(test)]
pub(crate) fn replay(body: &[u8], parse: Parse) -> Result<Response, ModelError> {
    let mut decoding = Decoding::new(parse, 1 << 24, usize::MAX);
    decoding.feed(Some(body))?;
    if !decoding.over {
        decoding.feed(None)?;
    }
    Ok(decoding.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::FutureExt;

    fn drain(assembly: &mut Assembly) -> Vec<StreamEvent> {
        assembly.events.drain(..).collect()
    }

    /// Each event's data as more text; the first says why the model stopped.
    fn as_text(event: &Event, assembly: &mut Assembly) -> Result<Flow, ModelError> {
        assembly.stop(StopReason::EndTurn);
        assembly.text(&event.data)?;
        Ok(Flow::More)
    }

    /// The events of 24 MB of a stream in one chunk, as a server that sent
    /// it all before the client read it: no read ever waits. The request's
    /// time is up at `deadline`, if given.
    fn ready_at_once(
        transport: &Transport,
        deadline: Option<std::time::Instant>,
    ) -> BoxStream<'_, Result<StreamEvent, ModelError>> {
        let body = "data: All is well, all is well, all is well.\n\n".repeat(500_000);
        let answer = Answer::new(reqwest::Response::from(http::Response::new(body)), deadline);
        events(
            transport,
            Ok(futures::future::ready(Ok(answer)).boxed()),
            as_text,
            0,
        )
    }

    fn unlimited() -> Transport {
        let mut transport = Transport::new("http://localhost");
        transport.max_response_bytes = usize::MAX;
        transport
    }

    #[test]
    fn a_deadline_holds_while_the_whole_body_is_ready_at_once() {
        let transport = unlimited();
        let start = std::time::Instant::now();
        let deadline = start + std::time::Duration::from_millis(100);
        let read = futures::executor::block_on(crate::toolbox::timer::within(
            collect(ready_at_once(&transport, None)),
            Some(deadline),
        ));
        assert!(read.is_err(), "read to the end: the deadline did not hold");
        // The overrun is the work of one piece: far less than the whole.
        assert!(
            start.elapsed() < std::time::Duration::from_secs(2),
            "{:?}",
            start.elapsed()
        );
    }

    #[test]
    fn a_requests_timeout_holds_while_the_whole_body_is_ready_at_once() {
        let transport = unlimited();
        let start = std::time::Instant::now();
        let deadline = start + std::time::Duration::from_millis(100);
        let read = futures::executor::block_on(collect(ready_at_once(&transport, Some(deadline))));
        assert!(matches!(read, Err(ModelError::Timeout { .. })), "{read:?}");
        assert!(start.elapsed() < std::time::Duration::from_secs(2));
    }

    #[test]
    fn two_calls_interleaved_are_each_put_together() {
        let mut assembly = Assembly::new(1 << 20);
        assembly.call(0, Some("call_a"), Some("search")).unwrap();
        assembly.call(1, Some("call_b"), Some("refund")).unwrap();
        // Pieces cut mid-key, mid-escape (`\"` and `\u00e9`) and mid-number.
        for (key, piece) in [
            (0, "{\"q"),
            (1, "{\"cents\": 2"),
            (0, "\": \"say \\"),
            (1, "50}"),
            (0, "\"hi\\\" caf\\u00"),
            (0, "e9\"}"),
        ] {
            assembly.call(key, None, None).unwrap();
            assembly.arguments(key, piece).unwrap();
        }
        assembly.stop(StopReason::ToolUse);
        let events = drain(&mut assembly);
        assert_eq!(
            events[1],
            StreamEvent::CallStarted {
                index: 1,
                id: Some("call_b".into()),
                name: "refund".into()
            }
        );
        assert_eq!(events.len(), 8);
        let response = assembly.finish();
        assert_eq!(
            response.calls[0].arguments,
            r#"{"q": "say \"hi\" caf\u00e9"}"#
        );
        let value: serde_json::Value = serde_json::from_str(&response.calls[0].arguments).unwrap();
        assert_eq!(value["q"], "say \"hi\" café");
        assert_eq!(response.calls[1].arguments, r#"{"cents": 250}"#);
        assert_eq!(response.stop, StopReason::ToolUse);
    }

    #[test]
    fn a_new_id_under_a_used_key_is_a_new_call() {
        let mut assembly = Assembly::new(1 << 20);
        assembly.call(0, Some("call_1"), Some("a")).unwrap();
        assembly.arguments(0, "{}").unwrap();
        assembly.call(0, Some("call_2"), Some("b")).unwrap();
        assembly.arguments(0, "{\"x\": 1}").unwrap();
        let response = assembly.finish();
        let names: Vec<_> = response.calls.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
        assert_eq!(response.calls[1].arguments, "{\"x\": 1}");
        // No stop reason given, calls made: they wait for their results.
        assert_eq!(response.stop, StopReason::ToolUse);
    }

    #[test]
    fn arguments_for_a_call_never_started_are_malformed() {
        let mut assembly = Assembly::new(1 << 20);
        assert!(matches!(
            assembly.arguments(3, "{}"),
            Err(ModelError::Malformed { .. })
        ));
    }

    #[test]
    fn the_size_limit_holds_across_text_and_arguments() {
        let mut assembly = Assembly::new(10);
        assembly.text("12345").unwrap();
        assembly.call(0, None, Some("f")).unwrap();
        assert!(matches!(
            assembly.arguments(0, "123456"),
            Err(ModelError::Malformed { .. })
        ));
    }

    #[test]
    fn a_call_without_arguments_takes_what_was_given_or_an_empty_object() {
        let mut assembly = Assembly::new(1 << 20);
        assembly.call(0, Some("toolu_1"), Some("now")).unwrap();
        assembly.call(1, Some("toolu_2"), Some("echo")).unwrap();
        assembly.given(1, "{\"x\":1}".into()).unwrap();
        let response = assembly.finish();
        assert_eq!(response.calls[0].arguments, "{}");
        assert_eq!(response.calls[1].arguments, "{\"x\":1}");
    }
}
