//! The machine's CPU time as `/proc/stat` counts it, for the benches: what share of it the
//! hypervisor gave to other machines while a measurement ran (its "steal"). On a virtual
//! machine a few percent of steal turns latencies into the neighbours' noise.

/// The machine's CPU time so far, in ticks, summed over its CPUs: all of it, and what the
/// hypervisor stole (`/proc/stat`'s first line).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HostTicks {
    total: u64,
    steal: u64,
}

impl HostTicks {
    /// This machine's ticks now; `None` where `/proc/stat` does not tell (not Linux).
    pub fn now() -> Option<Self> {
        Self::parse(&std::fs::read_to_string("/proc/stat").ok()?)
    }

    /// Reads `/proc/stat`'s `cpu` line: user, nice, system, idle, iowait, irq, softirq, steal,
    /// then guest times that user and nice already count. `None` without one.
    fn parse(stat: &str) -> Option<Self> {
        let line = stat.lines().next()?.strip_prefix("cpu ")?;
        let ticks: Vec<u64> = line
            .split_whitespace()
            .map(str::parse)
            .collect::<Result<_, _>>()
            .ok()?;
        let own = ticks.get(..8)?;
        Some(Self {
            total: own.iter().sum(),
            steal: own[7],
        })
    }

    /// The stolen share of the ticks between `before` and now, in percent; `None` when no
    /// tick passed.
    pub fn steal_percent_since(self, before: Self) -> Option<f64> {
        let total = self.total.checked_sub(before.total).filter(|&t| t > 0)?;
        let steal = self.steal.saturating_sub(before.steal);
        Some(100.0 * steal as f64 / total as f64)
    }
}

/// The stolen share of the machine's CPU from `before` (taken with `HostTicks::now`) until
/// now, as a table shows it: a percentage, or "–" where it cannot be told.
pub fn steal_since(before: Option<HostTicks>) -> String {
    before
        .zip(HostTicks::now())
        .and_then(|(before, after)| after.steal_percent_since(before))
        .map_or_else(|| "–".into(), |steal| format!("{steal:.1}"))
}

/// The smoke runs' check of `HostTicks`: a `/proc/stat` as Linux writes it (its guest columns
/// not added twice), lines it cannot read, and this machine's own.
pub fn check() {
    let stat = "cpu  100 5 50 800 10 2 3 30 7 0\ncpu0 50 2 25 400 5 1 1 15 3 0\n";
    let before = HostTicks::parse(stat).expect("a /proc/stat line is read");
    assert_eq!(
        before,
        HostTicks {
            total: 1000,
            steal: 30
        }
    );
    let after = HostTicks {
        total: 1200,
        steal: 40,
    };
    assert_eq!(after.steal_percent_since(before), Some(5.0));
    assert_eq!(before.steal_percent_since(before), None);
    assert_eq!(HostTicks::parse("cpu  1 2 3\n"), None);
    assert_eq!(HostTicks::parse("intr 1 2 3 4 5 6 7 8\n"), None);
    if cfg!(target_os = "linux") {
        assert!(HostTicks::now().is_some(), "/proc/stat is read on Linux");
    }
}
