//! `cargo xtask eval`: runs today's ranking and the baselines over a judged set and prints one
//! table (`docs/quality.md`).

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use clap::Parser;
use giftgenius_catalog::Catalog;
use giftgenius_catalog::meaning::Meaning;
use giftgenius_eval::report;
use giftgenius_eval::sets::{SetName, load};

/// Suggestion quality on a judged set: nDCG@6, precision@6, top card, unsuitable cards, empties
/// and reasons, for today's ranking and the baselines.
#[derive(Debug, Parser)]
#[command(name = "cargo xtask eval")]
struct Args {
    /// Which judged set: dev while you work, heldout only for the final check of a change.
    #[arg(long, value_enum, default_value = "dev")]
    set: SetName,
    /// The report as JSON instead of the table.
    #[arg(long)]
    json: bool,
    /// Also each request's top N cards of today's ranking, with their grade and first reason.
    #[arg(long, value_name = "N")]
    show: Option<usize>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let started = Instant::now();
    let set = match load(args.set) {
        Ok(set) => set,
        Err(e) => {
            eprintln!("eval: {e:#}");
            return ExitCode::FAILURE;
        }
    };
    // The server's model and word cache: the catalog ranks with the related words it would.
    let meaning = match giftgenius_meaning::default_dir()
        .and_then(|dir| Meaning::shared(&dir, giftgenius_catalog::meaning::default_cache_file()))
    {
        Ok(meaning) => meaning,
        Err(e) => {
            eprintln!("eval: {e} (`cargo xtask eval` installs the model first)");
            return ExitCode::FAILURE;
        }
    };
    let catalog = Arc::new(meaning.attach(Catalog::builtin()));
    let problems = set.problems(&catalog);
    if !problems.is_empty() {
        eprintln!("eval: the {} set disagrees with the catalog:\n  {}", args.set.as_str(), problems.join("\n  "));
        return ExitCode::FAILURE;
    }
    let report = report::run(&set, &catalog, &meaning, args.show);
    if args.json {
        match serde_json::to_string_pretty(&report) {
            Ok(json) => println!("{json}"),
            Err(e) => {
                eprintln!("eval: {e}");
                return ExitCode::FAILURE;
            }
        }
    } else {
        print!("{}", report.text());
        println!("Whole run (load, catalog, every ranking): {:.0} ms.", started.elapsed().as_secs_f64() * 1000.0);
    }
    ExitCode::SUCCESS
}
