//! Progress of long runs (DESIGN.md §6): a progress line on stderr with the
//! executions explored, the rate, the blocked count, the alternatives still
//! pending (how much is left on the current branch stack) and the elapsed
//! time. Shown by default when stderr is a terminal and the run lasts more
//! than a second; `CLMM_PROGRESS=1` (or `Builder::progress(true)`) shows it
//! from the first tick, and also when stderr is not a terminal (a CI log,
//! `2>file`): there, as plain lines `clmm: progress: ...`, at most one a
//! second, since a line cannot be redrawn in place.

use crate::explore::Stats;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// The progress line of one run.
pub struct Progress {
    enabled: bool,
    /// Forced on: no initial delay.
    forced: bool,
    /// stderr is a terminal: one line redrawn in place (indicatif);
    /// otherwise plain lines.
    terminal: bool,
    start: Instant,
    bar: Option<ProgressBar>,
    /// When the last line was drawn (`None`: not yet).
    last: Option<Instant>,
}

impl Progress {
    /// `setting`: `Some(on)` forces it; `None` shows it when stderr is a
    /// terminal (after a second).
    pub fn new(setting: Option<bool>) -> Progress {
        // Asked once per process: a check of a small test lasts a few
        // microseconds, and the question is a system call.
        static TERMINAL: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        let terminal = *TERMINAL.get_or_init(|| std::io::stderr().is_terminal());
        Progress {
            enabled: setting.unwrap_or(terminal),
            forced: setting == Some(true),
            terminal,
            start: Instant::now(),
            bar: None,
            last: None,
        }
    }

    /// Called every 64 executions; cheap (a clock read).
    pub fn tick(&mut self, stats: &Stats, pending: usize) {
        if !self.enabled {
            return;
        }
        let now = Instant::now();
        let elapsed = now.duration_since(self.start);
        if !self.forced && elapsed < Duration::from_secs(1) {
            return;
        }
        let every = if self.terminal { Duration::from_millis(100) } else { Duration::from_secs(1) };
        if self.last.is_some_and(|last| now.duration_since(last) < every) {
            return;
        }
        self.last = Some(now);
        let n = stats.complete + stats.blocked;
        let line = format!(
            "{} executions ({} blocked, {} failed), {:.0}/s, {} alternatives pending, {:.1} s elapsed",
            stats.complete,
            stats.blocked,
            stats.failed,
            n as f64 / elapsed.as_secs_f64().max(1e-9),
            pending,
            elapsed.as_secs_f64()
        );
        if !self.terminal {
            eprintln!("clmm: progress: {line}");
            return;
        }
        let bar = self.bar.get_or_insert_with(|| {
            let b = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            b.set_style(ProgressStyle::with_template("clmm {spinner} {msg}").expect("progress template"));
            b
        });
        bar.set_message(line);
        bar.tick();
    }

    /// Clear the line at the end of the run (a terminal's; plain lines
    /// stay).
    pub fn finish(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
    }
}
