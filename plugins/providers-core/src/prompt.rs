//! A conversation rendered as one prompt, for CLIs that take a single
//! prompt on stdin (`claude -p`, `codex exec`).
//!
//! A case with one user message is sent as that message, byte for byte. A
//! multi-turn case cannot be replayed turn by turn through a one-shot CLI
//! (it has no way to inject earlier assistant turns), so it is rendered as
//! a transcript of the earlier turns, each under a `[role]` line, followed
//! by the last user message under `[user — reply to this]`, with one
//! sentence asking for the reply only. `system` turns inside the case are
//! not part of the transcript: callers add them to the system prompt.

use cautilus_sdk::provider::Invocation;
use cautilus_sdk::{Message, PluginError};

/// The prompt of `messages` (system turns skipped), or `None` when there is
/// no turn to answer.
pub fn render(messages: &[Message]) -> Option<String> {
    let turns: Vec<&Message> = messages.iter().filter(|m| m.role != "system").collect();
    match turns.as_slice() {
        [] => None,
        [only] if only.role == "user" => Some(only.content.clone()),
        [earlier @ .., last] if last.role == "user" => {
            let mut out = String::from("Earlier turns of this conversation, oldest first:\n\n");
            for turn in earlier {
                out.push_str(&format!("[{}]\n{}\n\n", turn.role, turn.content));
            }
            out.push_str(
                "Reply to the last user message as the assistant; give the reply only.\n\n",
            );
            out.push_str(&format!("[user — reply to this]\n{}", last.content));
            Some(out)
        }
        all => {
            let mut out = String::from("This conversation, oldest first:\n\n");
            for turn in all {
                out.push_str(&format!("[{}]\n{}\n\n", turn.role, turn.content));
            }
            out.push_str("Continue as the assistant; give the next reply only.");
            Some(out)
        }
    }
}

/// The prompt of a case for CLI `name`, or the error naming the case.
pub fn of_case(name: &str, request: &Invocation) -> Result<String, PluginError> {
    render(&request.messages).ok_or_else(|| {
        PluginError::failed(format!(
            "{name}: case `{}` has no message to answer",
            request.case_id
        ))
    })
}

/// The case's messages followed by the answer (the conversation observed).
pub fn with_answer(messages: &[Message], answer: &str) -> Vec<Message> {
    let mut all = messages.to_vec();
    all.push(Message {
        role: "assistant".into(),
        content: answer.to_string(),
    });
    all
}

/// The system prompt: the suite's `system`, then each `system` turn of the
/// case, separated by blank lines; `None` when there is none.
pub fn system(suite: Option<&str>, messages: &[Message]) -> Option<String> {
    let parts: Vec<&str> = suite
        .into_iter()
        .chain(
            messages
                .iter()
                .filter(|m| m.role == "system")
                .map(|m| m.content.as_str()),
        )
        .filter(|s| !s.trim().is_empty())
        .collect();
    (!parts.is_empty()).then(|| parts.join("\n\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(role: &str, content: &str) -> Message {
        Message {
            role: role.into(),
            content: content.into(),
        }
    }

    #[test]
    fn one_user_turn_is_sent_as_it_is() {
        assert_eq!(
            render(&[m("user", "Hi\nthere")]).as_deref(),
            Some("Hi\nthere")
        );
        assert_eq!(render(&[]), None);
    }

    #[test]
    fn earlier_turns_become_a_transcript_before_the_last_user_message() {
        let prompt = render(&[
            m("system", "ignored here"),
            m("user", "I installed it."),
            m("assistant", "Welcome!"),
            m("user", "Which command?"),
        ])
        .unwrap();
        assert_eq!(
            prompt,
            "Earlier turns of this conversation, oldest first:\n\n[user]\nI installed it.\n\n\
             [assistant]\nWelcome!\n\nReply to the last user message as the assistant; give the \
             reply only.\n\n[user — reply to this]\nWhich command?"
        );
    }

    #[test]
    fn system_turns_join_the_suite_system() {
        assert_eq!(
            system(Some("Be brief."), &[m("system", "French."), m("user", "x")]).as_deref(),
            Some("Be brief.\n\nFrench.")
        );
        assert_eq!(system(None, &[m("user", "x")]), None);
    }
}
