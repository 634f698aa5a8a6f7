//! The chat host against the real GiftGenius and a scripted model server (one test binary:
//! `support` starts both; a module per area).

mod loop_runs;
mod panel;
mod purchases;
mod support;
mod valves;
