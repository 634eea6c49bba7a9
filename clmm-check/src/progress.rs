//! Progress of long runs (DESIGN.md §6): a progress line on stderr with the
//! executions explored, the rate, the blocked count, the alternatives still
//! pending (how much is left on the current branch stack) and the elapsed
//! time. Shown with `CLMM_PROGRESS=1` (or `Builder::progress(true)`), and by
//! default when stderr is a terminal and the run lasts more than a second.

use crate::explore::Stats;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// The progress line of one run.
pub struct Progress {
    enabled: bool,
    start: Instant,
    bar: Option<ProgressBar>,
    last: Instant,
}

impl Progress {
    /// `setting`: `Some(on)` forces it; `None` shows it when stderr is a
    /// terminal.
    pub fn new(setting: Option<bool>) -> Progress {
        let now = Instant::now();
        Progress { enabled: setting.unwrap_or_else(|| std::io::stderr().is_terminal()), start: now, bar: None, last: now }
    }

    /// Called every 64 executions; cheap (a clock read).
    pub fn tick(&mut self, stats: &Stats, pending: usize) {
        if !self.enabled {
            return;
        }
        let now = Instant::now();
        if now.duration_since(self.start) < Duration::from_secs(1) || now.duration_since(self.last) < Duration::from_millis(100) {
            return;
        }
        self.last = now;
        let bar = self.bar.get_or_insert_with(|| {
            let b = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            b.set_style(ProgressStyle::with_template("clmm {spinner} {msg} [{elapsed_precise}]").expect("progress template"));
            b
        });
        let secs = now.duration_since(self.start).as_secs_f64().max(1e-9);
        let n = stats.complete + stats.blocked;
        bar.set_message(format!(
            "{} executions ({} blocked, {} failed), {:.0}/s, {} alternatives pending",
            stats.complete,
            stats.blocked,
            stats.failed,
            n as f64 / secs,
            pending
        ));
        bar.tick();
    }

    /// Clear the line at the end of the run.
    pub fn finish(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
    }
}
