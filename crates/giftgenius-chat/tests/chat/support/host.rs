//! A scripted person: records what the terminal would print and answers confirmations in order.

use std::collections::VecDeque;
use std::future::Future;

use giftgenius_chat::host::{Confirmation, Event, Host, is_yes, render};
use giftgenius_chat::purchase::{Draft, card};

#[derive(Default)]
pub struct Person {
    /// Every line the terminal host would print, in order (cards included).
    pub lines: Vec<String>,
    pub cards: Vec<String>,
    answers: VecDeque<&'static str>,
}

impl Person {
    /// A person who answers each confirmation with the next of `answers` (then "no").
    pub fn answering(answers: &[&'static str]) -> Self {
        Self { answers: answers.iter().copied().collect(), ..Self::default() }
    }

    pub fn transcript(&self) -> String {
        self.lines.join("\n")
    }
}

impl Host for Person {
    fn show(&mut self, event: Event<'_>) {
        self.lines.push(render(&event));
    }

    fn confirm(&mut self, draft: &Draft) -> impl Future<Output = Confirmation> + Send {
        let answer = self.answers.pop_front().unwrap_or("no");
        let card = card(&draft.draft);
        self.lines.push(format!("{card}\nType \"yes\" to buy it (anything else cancels): {answer}"));
        self.cards.push(card);
        std::future::ready(if is_yes(answer) { Confirmation::Confirmed } else { Confirmation::Declined })
    }
}
