//! What the agent tells the model: the system prompt (the tools as text,
//! when the model does not take them natively, and how to call them), and
//! how it tells an answer that tried to call a tool from one that did not.

use std::fmt::Write;

use super::{Agent, OutputMode};
use crate::catalog::CatalogFormat;
use crate::effect::Effects;
use crate::model::Model;
use crate::plan::PlanPrompt;
use crate::reader::{ReadError, ReadErrorKind};

/// How a model that reads tools as text is told to call them.
const CALLS_AS_TEXT: &str = "To call tools, answer with only a JSON array of calls, each \
{\"name\": \"tool_name\", \"arguments\": {...}}, and nothing else; the results come back in \
the next messages. Calls in one answer may run in any order or at once: send a call that \
needs another's result in a later answer. When you are done, answer in plain text, without \
a call.";

pub(super) fn system<M: Model, A: Effects, O: Send + Sync + 'static>(
    agent: &Agent<M, A, O>,
) -> String {
    let mut prompt = agent.system.clone();
    let mut paragraph = |text: &str| {
        if !prompt.is_empty() {
            prompt.push_str("\n\n");
        }
        prompt.push_str(text);
    };
    let typed = agent.output.typed.as_deref();
    if agent.native().is_none() {
        let mut catalog = agent.toolbox.catalog(CatalogFormat::Text);
        // The output tool, when the answer is given by calling it.
        if let Some(Ok(output)) = typed
            .filter(|typed| typed.mode == OutputMode::Tool)
            .map(|typed| typed.toolbox.as_ref())
        {
            catalog = crate::catalog::join(&catalog, &output.catalog(CatalogFormat::Text));
        }
        let catalog = catalog.to_string();
        if catalog.is_empty() {
            paragraph("No tools are available.");
        } else {
            let mut tools = String::from(
                "These are the tools you can call, one a line: its name, its arguments' type, \
                 {its effects}, its result's type, and what it does.\n",
            );
            let _ = write!(tools, "{catalog}");
            paragraph(&tools);
            paragraph(CALLS_AS_TEXT);
        }
    }
    if let Some(typed) = typed {
        paragraph(&typed.instructions());
    }
    if agent.plans {
        // The prompt authoring uses, generated from the parser and checked
        // by its tests; the tools are listed once.
        let plans = PlanPrompt::new(&agent.toolbox).list_tools(agent.native().is_some());
        paragraph(&format!(
            "Instead of calls, you may answer with a plan: a program of tool calls that runs \
             at once, which suits work of several steps. Its value, or what is wrong with it, \
             comes back in the next message.\n\n{plans}"
        ));
    }
    prompt
}

/// Whether an answer the call readers could not read tried to call a tool
/// (then the model is told what was wrong) or is prose (a final answer).
/// The readers look for calls only where a call stands (see
/// [`reader`](crate::reader#where-a-call-stands-in-text)): prose that only
/// mentions calls (inline code, a code sample, a signature, a call in the
/// middle of a sentence) has no call ([`ReadErrorKind::NoCall`]), and is prose. Else it
/// tried when it is shaped as calls are (JSON, a list, a code fence, a
/// `<tool_call>` tag) or names one of `tools` before a `(`. Prose with
/// parentheses, "the account (cust_1)", is not a call.
pub(super) fn is_a_call_attempt<'t>(
    text: &str,
    error: &ReadError,
    mut tools: impl Iterator<Item = &'t str>,
) -> bool {
    if error.kind == ReadErrorKind::NoCall {
        return false;
    }
    let text = text.trim_start();
    text.starts_with(['{', '[', '`'])
        || text.contains("<tool_call>")
        || tools.any(|tool| {
            text.match_indices(tool)
                .any(|(at, _)| text[at + tool.len()..].trim_start().starts_with('('))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reader::{read_calls, CallFormat};

    /// Prose is a final answer; a call written wrong is told to the model.
    #[test]
    fn prose_is_no_call_attempt_and_broken_calls_are() {
        for prose in [
            "Your refund of $49.00 is on its way.",
            "Done. I looked up the account (cust_1) and refunded it.",
            "The weather in Lima is sunny: 24 °C.",
            "",
            "Try `weather()` once the station is back.",
            "You can use weather(city) for that.",
            "```python\ndef weather(city):\n    ...\nprint(weather(\"Lima\"))\n```",
            "I could call weather(city=\"Lima\") later, if you like.",
        ] {
            match read_calls(CallFormat::Auto, prose) {
                Ok(calls) => assert!(calls.is_empty(), "{prose}"),
                Err(error) => assert!(
                    !is_a_call_attempt(prose, &error, ["weather"].into_iter()),
                    "{prose}: {error:?}"
                ),
            }
        }
        for broken in [
            r#"[{"name": "weather", "arguments": {"city": "Lima"}"#,
            r#"{"name": "weather", "arguments": {"city": }}"#,
            "<tool_call>{\"name\": \"weather\", \"arguments\": {</tool_call>",
            "[weather(city=\"Lima\"",
            "I will call weather(city=\"Lima\" now",
            "```python\ndef weather(city): ...\n```\nweather(city=)",
        ] {
            let error = read_calls(CallFormat::Auto, broken).unwrap_err();
            assert!(
                is_a_call_attempt(broken, &error, ["weather"].into_iter()),
                "{broken}: {error:?}"
            );
        }
    }

    /// What an error is decides, not its words: an error that reads "no
    /// call in the text" but is of a call that could not be read is told
    /// to the model (it had been taken for prose by its words), and one of
    /// no call is prose whatever it says.
    #[test]
    fn the_kind_of_error_decides_not_its_words() {
        let broken = "[weather(city=\"Lima\"";
        let mut error = read_calls(CallFormat::Auto, broken).unwrap_err();
        assert_eq!(error.kind, ReadErrorKind::Malformed);
        error.found = "no call in the text".into();
        assert!(is_a_call_attempt(broken, &error, ["weather"].into_iter()));
        let prose = "You can use weather(city) for that.";
        let mut error = read_calls(CallFormat::Auto, prose).unwrap_err();
        assert_eq!(error.kind, ReadErrorKind::NoCall);
        error.found = "something else".into();
        assert!(!is_a_call_attempt(prose, &error, ["weather"].into_iter()));
    }
}
