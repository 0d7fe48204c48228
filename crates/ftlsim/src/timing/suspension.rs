//! P/E suspension (paper 001 chapter 3): the phases of a program (ISPP: pulse + verify per
//! iteration) and of an erase (pulse + verify), where a read (or, with Write-Suspend-Erase, a
//! write) may suspend them, and what resuming costs. The event core keeps one [`PeRun`] per
//! die for the program or erase it is doing and at most two suspended ones (an erase below a
//! program); this module holds the arithmetic, so the core only decides when.
//!
//! Every phase ends with a voltage reset of `T_vr` inside its duration (spec S2). A suspension
//! asked at `t` inside the terminal reset window, or under IPS anywhere in a program phase,
//! takes effect at the phase end and the phase counts as done; otherwise (IPC, and every erase
//! phase) a reset starts at once, the suspension takes effect at `t + T_vr` and the phase is
//! cancelled. Resuming a program reloads the page buffer from the shadow buffer (`T_buffer`);
//! a cancelled verify is redone; a cancelled program pulse is followed by a verify that decides
//! (with probability `p_ach`) whether the pulse must be redone. Resuming an erase pulse
//! re-biases the wires (`T_vr`) and applies the pulse time left; a cancelled erase verify is
//! redone.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use super::Nanos;
use crate::config::Latency;
use crate::error::{Result, SimError};

/// How program and erase array times are set (paper 001 §3.3's motivation scenarios; the bus
/// transfer of a program's data is kept, spec S10).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PeLatency {
    /// `device.latency` as configured.
    #[default]
    AsConfigured,
    /// PER: program and erase take as long as a read's array time.
    Per,
    /// PE0: programs and erases take no array time (the contention-free ideal).
    Pe0,
}

/// How a program is suspended (paper 001 §3.3.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProgramSuspension {
    /// Programs run to completion.
    #[default]
    None,
    /// Inter Phase Suspension: at the end of the current pulse or verify phase.
    Ips,
    /// Intra Phase Cancelation: the current phase is cancelled after a voltage reset.
    Ipc,
}

/// How the device's programs and erases divide into phases (Table 3.1). Describes the device:
/// the phases add up to `device.latency.program_us` and `erase_us`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PePhases {
    /// ISPP iterations of a program (N_w_cycle); each is a pulse then a verify.
    pub ispp_iterations: u32,
    /// Program pulse of one iteration (T_w_program), microseconds.
    pub program_pulse_us: f64,
    /// Verify of one iteration (T_verify), microseconds.
    pub verify_us: f64,
    /// The verify that ends an erase, part of `erase_us` (spec S1: the erase pulse is
    /// `erase_us - erase_verify_us`).
    pub erase_verify_us: f64,
    /// The voltage reset that ends every phase (T_voltage_reset), microseconds.
    pub voltage_reset_us: f64,
    /// Reloading the page buffer from the shadow buffer when a program resumes (T_buffer).
    pub buffer_load_us: f64,
}

/// Which operations may be suspended, by what (paper 001 §3.4.1). Needs `device.timing.phases`
/// and the `rps` scheduler.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SuspensionConfig {
    /// Reads suspend erases.
    #[serde(default)]
    pub erase: bool,
    /// Reads suspend programs, and how.
    #[serde(default)]
    pub program: ProgramSuspension,
    /// IPC: the probability that a cancelled pulse already reached its target voltage, so that
    /// the verify after resuming finds the iteration done (spec S3; 0 = always redo the pulse).
    #[serde(default)]
    pub p_ach: f64,
    /// Write-Suspend-Erase: writes suspend erases while the clean space of every allocation
    /// unit of the die is above `wse_watermark`, and no read waits.
    #[serde(default)]
    pub write_suspends_erase: bool,
    /// Clean space, as a fraction of the exported space, at or below which writes no longer
    /// suspend erases (spec S6: 5%, below the 10% GC trigger).
    #[serde(default = "default_watermark")]
    pub wse_watermark: f64,
    /// Overhead limit: once a die has this many writes waiting, reads lose their priority
    /// (no suspension, and writes are served first) until the queue is shorter again; also
    /// under plain `rps`. 0 = no limit (paper 001 Fig. 3.9 sweeps 16-512).
    #[serde(default)]
    pub max_write_queue: u32,
    /// The overhead limit by age (spec 3.6: "the oldest write's wait"): once the oldest write
    /// waiting on a die has waited longer than this since its dispatch, reads lose their
    /// priority until it starts; also under plain `rps`. Microseconds; 0 = no limit.
    #[serde(default)]
    pub max_write_wait_us: f64,
}

fn default_watermark() -> f64 {
    0.05
}

impl Default for SuspensionConfig {
    fn default() -> Self {
        SuspensionConfig {
            erase: false,
            program: ProgramSuspension::None,
            p_ach: 0.0,
            write_suspends_erase: false,
            wse_watermark: default_watermark(),
            max_write_queue: 0,
            max_write_wait_us: 0.0,
        }
    }
}

impl SuspensionConfig {
    /// Whether anything may be suspended.
    pub fn enabled(&self) -> bool {
        self.erase || self.program != ProgramSuspension::None || self.write_suspends_erase
    }

    /// Whether an overhead limit takes reads' priority away when writes wait too long or too many.
    pub fn limits_writes(&self) -> bool {
        self.max_write_queue > 0 || self.max_write_wait_us > 0.0
    }

    /// Whether a die's waiting writes are over a limit at `now`: reads lose their priority.
    #[inline]
    pub fn over_limit(&self, writes: &WriteBacklog, now: Nanos) -> bool {
        let queue = self.max_write_queue > 0 && writes.count >= self.max_write_queue;
        let wait = || {
            let limit = (self.max_write_wait_us * 1000.0).round() as Nanos;
            writes.oldest.first().is_some_and(|&(at, _)| now.saturating_sub(at) > limit)
        };
        queue || (self.max_write_wait_us > 0.0 && wait())
    }

    /// Checks the suspension settings against the device (called from the configuration's
    /// validation, with the scheduler's and timing model's checks done there).
    pub fn validate(&self, phases: Option<&PePhases>, latency: &Latency, pe_latency: PeLatency) -> Result<()> {
        if let Some(p) = phases {
            p.validate(latency)?;
        }
        if !(0.0..=1.0).contains(&self.p_ach) {
            return Err(SimError::config(
                "device.timing.suspension.p_ach",
                format!("must be a probability in [0, 1], found {:?}", self.p_ach),
            ));
        }
        if !(0.0..1.0).contains(&self.wse_watermark) {
            return Err(SimError::config(
                "device.timing.suspension.wse_watermark",
                format!("must be a fraction of the exported space in [0, 1), found {:?}", self.wse_watermark),
            ));
        }
        if !self.max_write_wait_us.is_finite() || self.max_write_wait_us < 0.0 {
            return Err(SimError::config(
                "device.timing.suspension.max_write_wait_us",
                format!("must be a time >= 0 us (0 = no limit), found {:?}", self.max_write_wait_us),
            ));
        }
        if self.enabled() {
            if phases.is_none() {
                return Err(SimError::config(
                    "device.timing.suspension",
                    "needs device.timing.phases (how programs and erases divide into phases)",
                ));
            }
            if pe_latency != PeLatency::AsConfigured {
                return Err(SimError::config(
                    "device.timing.pe_latency",
                    "PER and PE0 are read-priority scenarios without suspension; turn device.timing.suspension off",
                ));
            }
        }
        Ok(())
    }
}

impl PePhases {
    fn validate(&self, latency: &Latency) -> Result<()> {
        let field = |name: &str| format!("device.timing.phases.{name}");
        let times = [
            ("program_pulse_us", self.program_pulse_us),
            ("verify_us", self.verify_us),
            ("erase_verify_us", self.erase_verify_us),
            ("voltage_reset_us", self.voltage_reset_us),
            ("buffer_load_us", self.buffer_load_us),
        ];
        if let Some((name, v)) = times.iter().find(|(_, v)| !v.is_finite() || *v < 0.0) {
            return Err(SimError::config(field(name), format!("must be a time >= 0 us, found {v:?}")));
        }
        if self.ispp_iterations == 0 {
            return Err(SimError::config(field("ispp_iterations"), "must be at least 1"));
        }
        let ispp = self.ispp_iterations as f64 * (self.program_pulse_us + self.verify_us);
        if (ispp - latency.program_us).abs() > 1e-6 * latency.program_us.max(1.0) {
            return Err(SimError::config(
                field("ispp_iterations"),
                format!(
                    "{} iterations of {} + {} us make {ispp} us, but device.latency.program_us is {} \
                     (the phases divide the program time)",
                    self.ispp_iterations, self.program_pulse_us, self.verify_us, latency.program_us
                ),
            ));
        }
        let shortest = self.program_pulse_us.min(self.verify_us).min(self.erase_verify_us);
        if self.voltage_reset_us > shortest {
            return Err(SimError::config(
                field("voltage_reset_us"),
                format!("the reset ends every phase, so it must fit in the shortest one ({shortest} us)"),
            ));
        }
        if self.erase_verify_us + self.voltage_reset_us > latency.erase_us {
            return Err(SimError::config(
                field("erase_verify_us"),
                format!(
                    "device.latency.erase_us ({} us) must hold the erase verify and a pulse of at least the reset",
                    latency.erase_us
                ),
            ));
        }
        Ok(())
    }
}

/// The writes waiting on one die: programs issued and not yet started, whether queued or waiting
/// for the one before on their block (the die's write queue of the overhead limit).
#[derive(Debug, Clone, Default)]
pub struct WriteBacklog {
    count: u32,
    /// (dispatch time, operation) of each, kept only under a wait limit: the first is the oldest.
    oldest: BTreeSet<(Nanos, u32)>,
}

impl WriteBacklog {
    /// Program `op`, dispatched at `at`, was issued to the die.
    #[inline]
    pub fn issued(&mut self, op: u32, at: Nanos, config: &SuspensionConfig) {
        self.count += 1;
        if config.max_write_wait_us > 0.0 {
            self.oldest.insert((at, op));
        }
    }

    /// Program `op`, dispatched at `at`, started.
    #[inline]
    pub fn started(&mut self, op: u32, at: Nanos) {
        self.count -= 1;
        self.oldest.remove(&(at, op));
    }
}

/// The phase lengths in nanoseconds.
#[derive(Debug, Clone, Copy)]
pub struct PhaseCosts {
    pub iterations: u32,
    pub pulse: Nanos,
    pub verify: Nanos,
    pub erase_pulse: Nanos,
    pub erase_verify: Nanos,
    pub reset: Nanos,
    pub buffer: Nanos,
}

impl PhaseCosts {
    pub fn new(p: &PePhases, erase_us: f64) -> Self {
        let ns = |us: f64| (us * 1000.0).round() as Nanos;
        PhaseCosts {
            iterations: p.ispp_iterations,
            pulse: ns(p.program_pulse_us),
            verify: ns(p.verify_us),
            erase_pulse: ns(erase_us) - ns(p.erase_verify_us),
            erase_verify: ns(p.erase_verify_us),
            reset: ns(p.voltage_reset_us),
            buffer: ns(p.buffer_load_us),
        }
    }

    fn phases(&self) -> u32 {
        2 * self.iterations
    }

    /// Length of the regular program phase `k` (even: a pulse, odd: a verify).
    fn program_phase(&self, k: u32) -> Nanos {
        if k.is_multiple_of(2) {
            self.pulse
        } else {
            self.verify
        }
    }

    /// Time of the regular program phases from `k` to the last.
    fn program_from(&self, k: u32) -> Nanos {
        let left = self.phases().saturating_sub(k) as Nanos;
        let pulses = if k.is_multiple_of(2) { left.div_ceil(2) } else { left / 2 };
        pulses * self.pulse + (left - pulses) * self.verify
    }
}

/// Program or erase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PeKind {
    Program,
    Erase,
}

/// How far a program or erase has got, as a run of phases that started at `run_start`: first
/// `lead` (a program's extra verify after IPC cancelled a pulse; an erase's pulse time left),
/// then the regular phases from `next` (a program's phase index, 2i = pulse of iteration i and
/// 2i + 1 its verify; for an erase, 0 = the pulse is in `lead`, 1 = only the verify is left).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeRun {
    pub op: u32,
    pub kind: PeKind,
    pub run_start: Nanos,
    pub lead: Nanos,
    pub next: u32,
    /// When it first started, how long it would have taken uninterrupted, and the die time it
    /// has used so far (for the effective versus original latency).
    pub first_start: Nanos,
    pub original: Nanos,
    pub used: Nanos,
    pub suspensions: u32,
}

/// Where a suspension asked at some time takes effect, and what it does to the phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Suspend {
    /// When the die is free for the preempting operation.
    pub at: Nanos,
    /// The phase was cancelled (a reset started at once) rather than run to its end.
    pub cancelled: bool,
    /// The run to resume from.
    pub rest: PeRun,
}

impl PeRun {
    /// A program whose ISPP starts at `ispp_start` (after its data transfer), started at `now`.
    pub fn program(op: u32, now: Nanos, ispp_start: Nanos, c: &PhaseCosts) -> Self {
        let original = ispp_start - now + c.program_from(0);
        PeRun {
            op,
            kind: PeKind::Program,
            run_start: ispp_start,
            lead: 0,
            next: 0,
            first_start: now,
            original,
            used: 0,
            suspensions: 0,
        }
    }

    pub fn erase(op: u32, now: Nanos, c: &PhaseCosts) -> Self {
        let original = c.erase_pulse + c.erase_verify;
        PeRun {
            op,
            kind: PeKind::Erase,
            run_start: now,
            lead: c.erase_pulse,
            next: 0,
            first_start: now,
            original,
            used: 0,
            suspensions: 0,
        }
    }

    /// When the run ends if nothing suspends it.
    pub fn end(&self, c: &PhaseCosts) -> Nanos {
        self.run_start
            + self.lead
            + match self.kind {
                PeKind::Program => c.program_from(self.next),
                PeKind::Erase => c.erase_verify,
            }
    }

    /// Suspends the run at time `t` (`ipc`: cancel a program phase rather than finish it; erase
    /// phases are always cancelled, spec 3.4). `None` when the operation ends at the suspension
    /// point anyway (the terminal reset window of its last phase). `p_ach` draws whether a
    /// cancelled pulse reached its target.
    pub fn suspend(&self, t: Nanos, ipc: bool, c: &PhaseCosts, achieved: impl FnOnce() -> bool) -> Option<Suspend> {
        let end = self.end(c);
        if t >= end {
            return None;
        }
        // Before the phases start (a program's data transfer or buffer reload, an erase's
        // re-bias): suspended where the first phase would start.
        if t < self.run_start {
            return Some(Suspend { at: self.run_start, cancelled: false, rest: *self });
        }
        let (start, len, phase) = self.phase_at(t, c);
        let phase_end = start + len;
        let cancel = (ipc || self.kind == PeKind::Erase) && t + c.reset < phase_end;
        if !cancel {
            if phase_end >= end {
                return None;
            }
            let rest = self.after_phase(phase, phase_end);
            return Some(Suspend { at: phase_end, cancelled: false, rest });
        }
        let rest = match (self.kind, phase) {
            // The pulse time left is applied on resume (after a re-bias).
            (PeKind::Erase, Phase::Lead) => PeRun { lead: self.lead - (t - start), ..*self },
            // A cancelled erase verify is redone.
            (PeKind::Erase, _) => PeRun { lead: 0, next: 1, ..*self },
            // A cancelled verify (the extra one included) is redone.
            (PeKind::Program, Phase::Lead) => *self,
            (PeKind::Program, Phase::Regular(k)) if k % 2 == 1 => PeRun { lead: 0, next: k, ..*self },
            // A cancelled pulse: a verify decides whether the iteration needs it again.
            (PeKind::Program, Phase::Regular(k)) => {
                PeRun { lead: c.verify, next: if achieved() { k + 2 } else { k }, ..*self }
            }
        };
        Some(Suspend { at: t + c.reset, cancelled: true, rest })
    }

    /// The run continuing at the phase after `phase`, which ended at `at`.
    fn after_phase(&self, phase: Phase, at: Nanos) -> PeRun {
        let next = match (self.kind, phase) {
            (PeKind::Program, Phase::Lead) => self.next,
            (PeKind::Program, Phase::Regular(k)) => k + 1,
            (PeKind::Erase, _) => 1,
        };
        PeRun { run_start: at, lead: 0, next, ..*self }
    }

    /// The phase under way at `t` (not before `run_start`): its start, length and which.
    fn phase_at(&self, t: Nanos, c: &PhaseCosts) -> (Nanos, Nanos, Phase) {
        let lead_end = self.run_start + self.lead;
        if t < lead_end {
            return (self.run_start, self.lead, Phase::Lead);
        }
        match self.kind {
            PeKind::Erase => (lead_end, c.erase_verify, Phase::Regular(1)),
            PeKind::Program => {
                let (mut k, mut start) = (self.next, lead_end);
                if k % 2 == 1 {
                    if t < start + c.verify {
                        return (start, c.verify, Phase::Regular(k));
                    }
                    k += 1;
                    start += c.verify;
                }
                let cycle = c.pulse + c.verify;
                // `t` is before the run's end, so inside one of the cycles left.
                let (done, rest) = ((t - start) / cycle, (t - start) % cycle);
                let (k, start) = (k + 2 * done as u32, start + done * cycle);
                if rest < c.pulse {
                    (start, c.pulse, Phase::Regular(k))
                } else {
                    (start + c.pulse, c.program_phase(k + 1), Phase::Regular(k + 1))
                }
            }
        }
    }

    /// The run resumed at `now`: a program first reloads its page buffer (S14: nothing else),
    /// an erase with pulse time left first re-biases its wires.
    pub fn resume(&self, now: Nanos, c: &PhaseCosts) -> PeRun {
        let setup = match self.kind {
            PeKind::Program => c.buffer,
            PeKind::Erase if self.next == 0 => c.reset,
            PeKind::Erase => 0,
        };
        PeRun { run_start: now + setup, ..*self }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Lead,
    Regular(u32),
}

/// What suspension did over a run (paper 001 §3.5 Figs. 3.7-3.8).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SuspensionStats {
    /// Programs and erases completed.
    pub programs: u64,
    pub erases: u64,
    /// Of them, those suspended at least once.
    pub suspended_programs: u64,
    pub suspended_erases: u64,
    /// Suspensions by kind: erases by reads, programs at a phase end (IPS, or IPC inside a
    /// terminal reset window), programs by cancelling a phase (IPC), erases by writes (WSE).
    pub erase_by_read: u64,
    pub program_at_phase_end: u64,
    pub program_cancelled: u64,
    pub erase_by_write: u64,
    /// Over the suspended operations: their uninterrupted service time, their first start to
    /// completion, and the die time they used.
    pub original_ns: u128,
    pub effective_ns: u128,
    pub used_ns: u128,
    /// Reads (and WSE writes) that suspended an operation, and their total wait for the
    /// suspension point.
    pub preemptions: u64,
    pub wait_for_suspension_ns: u128,
    /// Writes of evicted buffer pages: dispatch to program completion (the device write latency).
    pub device_writes: u64,
    pub device_write_ns: u128,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ConfigBuilder;

    /// The error a configuration on the chapter-3 MLC preset gets, or "" when it is valid.
    fn config_error(sets: &[&str]) -> String {
        let mut b = ConfigBuilder::new().preset("ssd16-ch3-mlc").unwrap();
        for set in sets {
            b = b.set(set).unwrap();
        }
        b.build().err().map(|e| e.to_string()).unwrap_or_default()
    }

    #[test]
    fn bad_suspension_settings_name_their_field() {
        assert_eq!(
            config_error(&["device.timing.suspension.program=\"ipc\"", "device.timing.suspension.erase=true"]),
            ""
        );
        let cases: &[(&[&str], &str)] = &[
            (&["device.timing.suspension.p_ach=1.5"], "device.timing.suspension.p_ach"),
            (&["device.timing.suspension.wse_watermark=1.0"], "device.timing.suspension.wse_watermark"),
            (&["device.timing.phases.ispp_iterations=14"], "device.timing.phases.ispp_iterations"),
            (&["device.timing.phases.ispp_iterations=0"], "device.timing.phases.ispp_iterations"),
            (&["device.timing.phases.voltage_reset_us=30.0"], "device.timing.phases.voltage_reset_us"),
            (&["device.timing.phases.buffer_load_us=-1.0"], "device.timing.phases.buffer_load_us"),
            (
                &["device.latency.erase_us=20.0", "device.timing.phases.verify_us=24.0"],
                "device.timing.phases.erase_verify_us",
            ),
            (&["device.timing.suspension.erase=true", "device.timing.scheduler=\"fifo\""], "device.timing.suspension"),
            (
                &["device.timing.suspension.max_write_queue=16", "device.timing.scheduler=\"fifo\""],
                "device.timing.suspension",
            ),
            (&["device.timing.suspension.max_write_wait_us=-1.0"], "device.timing.suspension.max_write_wait_us"),
            (&["device.timing.suspension.max_write_wait_us=nan"], "device.timing.suspension.max_write_wait_us"),
            (&["device.timing.suspension.max_write_wait_us=inf"], "device.timing.suspension.max_write_wait_us"),
            (
                &["device.timing.suspension.max_write_wait_us=500.0", "device.timing.scheduler=\"fifo\""],
                "device.timing.suspension",
            ),
            (
                &["device.timing.suspension.program=\"ips\"", "device.timing.pe_latency=\"pe0\""],
                "device.timing.pe_latency",
            ),
        ];
        for (sets, field) in cases {
            let e = config_error(sets);
            assert!(e.contains(field), "{sets:?}: {e}");
        }
        let e = ConfigBuilder::new()
            .preset("ssd16")
            .unwrap()
            .set("device.timing.suspension.erase=true")
            .unwrap()
            .build()
            .unwrap_err()
            .to_string();
        assert!(e.contains("device.timing.phases"), "{e}");
    }

    #[test]
    fn the_chapter_3_presets_hold_table_3_1() {
        for (preset, read, bus_page, program, iterations, pulse, verify, erase) in [
            ("ssd16-ch3-slc", 10.0, 20_000, 140.0, 5, 20.0, 8.0, 1500.0),
            ("ssd16-ch3-mlc", 25.0, 40_000, 660.0, 15, 20.0, 24.0, 3300.0),
        ] {
            let c = ConfigBuilder::new().preset(preset).unwrap().build().unwrap();
            let d = &c.device;
            let p = d.timing.phases.as_ref().unwrap();
            assert_eq!((d.latency.read_us, d.latency.program_us), (read, program), "{preset}");
            assert_eq!(crate::timing::OpCosts::new(d).page_transfer, bus_page, "{preset}");
            assert_eq!((p.ispp_iterations, p.program_pulse_us, p.verify_us), (iterations, pulse, verify), "{preset}");
            assert_eq!(d.latency.erase_us - p.erase_verify_us, erase, "{preset}: the erase pulse");
            assert_eq!((p.voltage_reset_us, p.buffer_load_us), (4.0, 3.0), "{preset}");
            assert_eq!((d.geometry.channels, d.geometry.planes_per_die, c.buffer.size_mb), (16, 4, 64.0), "{preset}");
        }
    }

    const US: Nanos = 1000;

    /// Table 3.1, MLC.
    fn mlc() -> PhaseCosts {
        PhaseCosts {
            iterations: 15,
            pulse: 20 * US,
            verify: 24 * US,
            erase_pulse: 3300 * US,
            erase_verify: 24 * US,
            reset: 4 * US,
            buffer: 3 * US,
        }
    }

    fn program() -> PeRun {
        PeRun::program(0, 0, 40 * US, &mlc())
    }

    #[test]
    fn a_run_uninterrupted_takes_the_table_times() {
        let c = mlc();
        assert_eq!(program().end(&c), 40 * US + 660 * US);
        assert_eq!(program().original, 700 * US);
        assert_eq!(PeRun::erase(0, 0, &c).end(&c), 3324 * US);
        assert_eq!(c.program_from(1), 660 * US - 20 * US);
    }

    #[test]
    fn ips_suspends_at_the_end_of_the_pulse_and_resumes_with_its_verify_after_the_buffer_reload() {
        let c = mlc();
        // ISPP from 40 us; the pulse of iteration 2 (k = 4) runs [40 + 88, 40 + 108].
        let s = program().suspend(130 * US, false, &c, || unreachable!()).unwrap();
        assert_eq!(
            s,
            Suspend { at: 148 * US, cancelled: false, rest: PeRun { run_start: 148 * US, next: 5, ..program() } }
        );
        // A read takes [148, 213]; the program resumes then, verify of iteration 2 after T_buffer.
        let resumed = s.rest.resume(213 * US, &c);
        assert_eq!(resumed.run_start, 216 * US);
        assert_eq!(resumed.end(&c), 216 * US + 24 * US + 12 * 44 * US);
        // Inside a verify: at its end, then the next pulse.
        let s = program().suspend(150 * US, false, &c, || unreachable!()).unwrap();
        assert_eq!((s.at, s.rest.next), (172 * US, 6));
    }

    #[test]
    fn ipc_cancels_the_pulse_after_a_reset_and_redoes_it_after_a_verify() {
        let c = mlc();
        let s = program().suspend(130 * US, true, &c, || false).unwrap();
        assert_eq!(s.at, 134 * US, "T_read_extra = T_vr");
        assert!(s.cancelled);
        assert_eq!((s.rest.lead, s.rest.next), (24 * US, 4), "a verify, then the pulse again");
        let resumed = s.rest.resume(200 * US, &c);
        // T_buffer + verify + the 13 iterations from the cancelled one (2 of 0..15).
        assert_eq!(resumed.end(&c), 203 * US + 24 * US + 13 * 44 * US);
        // Achieved: the verify finds the iteration done, and the next one follows.
        let s = program().suspend(130 * US, true, &c, || true).unwrap();
        assert_eq!(s.rest.resume(200 * US, &c).end(&c), 203 * US + 24 * US + 12 * 44 * US);
    }

    #[test]
    fn ipc_inside_the_terminal_reset_window_behaves_as_ips() {
        let c = mlc();
        // The pulse [128, 148]: its reset window is [144, 148].
        let s = program().suspend(145 * US, true, &c, || unreachable!()).unwrap();
        assert_eq!(s, program().suspend(145 * US, false, &c, || unreachable!()).unwrap());
        assert_eq!((s.at, s.cancelled), (148 * US, false));
        // Just before the window: cancelled.
        let s = program().suspend(144 * US - 1, true, &c, || false).unwrap();
        assert_eq!((s.at, s.cancelled), (148 * US - 1, true));
    }

    #[test]
    fn ipc_redoes_a_cancelled_verify() {
        let c = mlc();
        // The verify of iteration 2 runs [148, 172].
        let s = program().suspend(150 * US, true, &c, || unreachable!()).unwrap();
        assert_eq!((s.at, s.rest.lead, s.rest.next), (154 * US, 0, 5));
        assert_eq!(s.rest.resume(300 * US, &c).end(&c), 303 * US + 24 * US + 12 * 44 * US);
        // Cancelled again inside the extra verify after a cancelled pulse: that verify is redone.
        let first = program().suspend(130 * US, true, &c, || false).unwrap().rest.resume(200 * US, &c);
        let again = first.suspend(210 * US, true, &c, || unreachable!()).unwrap();
        assert_eq!((again.at, again.rest.lead, again.rest.next), (214 * US, 24 * US, 4));
    }

    #[test]
    fn a_suspension_during_the_transfer_waits_for_its_end_and_the_last_phase_is_not_suspended() {
        let c = mlc();
        let s = program().suspend(10 * US, true, &c, || unreachable!()).unwrap();
        assert_eq!((s.at, s.rest.next, s.rest.lead), (40 * US, 0, 0));
        // The last verify, [676, 700]: inside its window the program simply ends.
        assert_eq!(program().suspend(697 * US, true, &c, || unreachable!()), None);
        assert_eq!(program().suspend(690 * US, false, &c, || unreachable!()), None);
        assert!(program().suspend(690 * US, true, &c, || unreachable!()).is_some());
    }

    #[test]
    fn an_erase_pulse_is_suspended_after_a_reset_and_resumed_after_a_re_bias_with_the_time_left() {
        let c = mlc();
        let erase = PeRun::erase(0, 0, &c);
        // 2.3 ms into the pulse: 1 ms of it is left ("1 ms will be done in the resumption").
        let s = erase.suspend(2300 * US, false, &c, || unreachable!()).unwrap();
        assert_eq!((s.at, s.cancelled, s.rest.lead), (2304 * US, true, 1000 * US));
        let resumed = s.rest.resume(2400 * US, &c);
        assert_eq!(resumed.end(&c), 2400 * US + 4 * US + 1000 * US + 24 * US);
        // Inside the pulse's terminal window: at the pulse end; the resume starts the verify.
        let s = erase.suspend(3298 * US, false, &c, || unreachable!()).unwrap();
        assert_eq!((s.at, s.cancelled, s.rest.next), (3300 * US, false, 1));
        assert_eq!(s.rest.resume(3400 * US, &c).end(&c), 3424 * US);
        // Inside the verify, before its window: cancelled, and redone in full.
        let s = erase.suspend(3310 * US, false, &c, || unreachable!()).unwrap();
        assert_eq!((s.at, s.rest.resume(3400 * US, &c).end(&c)), (3314 * US, 3424 * US));
        // Inside the verify's window: the erase ends.
        assert_eq!(erase.suspend(3321 * US, false, &c, || unreachable!()), None);
    }

    /// Expression 3.1: a read arriving uniformly at random during ISPP waits, under IPS, on
    /// average 8.29 us (SLC) or 11.09 us (MLC) for the suspension point.
    #[test]
    fn expression_3_1_by_sampling_arrivals_over_the_ispp_phases() {
        for (pulse, verify, iterations, want) in [(20, 8, 5, 8.286), (20, 24, 15, 11.091)] {
            let c = PhaseCosts { iterations, pulse: pulse * US, verify: verify * US, ..mlc() };
            let run = PeRun::program(0, 0, 0, &c);
            // Arrivals every 7 ns over the whole ISPP; in the last phase the read waits for the
            // program's end.
            let total = c.program_from(0);
            let wait: u128 = (0..total)
                .step_by(7)
                .map(|t| (run.suspend(t, false, &c, || unreachable!()).map_or(total, |s| s.at) - t) as u128)
                .sum();
            let mean_us = wait as f64 / total.div_ceil(7) as f64 / 1000.0;
            assert!((mean_us - want).abs() / want < 0.02, "{mean_us} us, expression 3.1 gives {want}");
        }
    }
}
