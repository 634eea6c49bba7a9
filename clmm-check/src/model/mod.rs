//! The OpenCL 2.x consistency model (DESIGN.md §3), read from
//! `shared/model/opencl_base.cat`, `opencl.cat` and `opencl_scopedsc.cat`.
//!
//! One submodule per relation of the formal model, each citing the `.cat`
//! line it implements: [`inclusive_scope`] (`incl`), [`host`] (the host
//! and command rules, which the `.cat` files do not have), [`release_sequence`]
//! (`rs`), [`sw`] (`ra_sw`, `bar_sw`, `scf`, `gsw`, `lsw`), [`hb`] (`ghb`,
//! `lhb`), [`axioms`] (`O-HbG/L`, `O-CohG/L`, `O-Rf`, `O-NaRfG/L`, `O-Rmw`),
//! [`sc`] (`O-Ssimp`, `O-Sscoped`), [`race`] (`dr`) and [`barrier`] (`bd`),
//! and [`vclock`] (`ghb`, `lhb` and the prefix axioms by vector clocks).
//!
//! Two implementations of the same axioms. [`vclock`] keeps a vector-clock
//! view of `ghb` and `lhb` per event, computed once when the event is added,
//! and checks on each new event only the axiom instances it completes: the
//! explorer's check of every prefix ([`Phase::Prefix`], necessary conditions
//! only, see below). [`check`] is the explicit implementation: every
//! relation of one execution graph computed as a bit matrix and the axioms
//! checked on it, used on complete graphs ([`Phase::Complete`], the exact
//! model, with races and barrier divergence), on the prefixes the vector
//! clocks leave undecided ([`vclock::Outcome::Unsure`]), and as the test
//! oracle of the vector clocks (`CLMM_CROSSCHECK=1` runs both on every
//! prefix; CI does so on the litmus suite and the kernels).
//!
//! # Prefixes
//!
//! The model is not prefix-closed: a write placed later in coherence order
//! between a release-sequence head and a later write of the head's unit cuts
//! the release sequence (`rs` is C11's), so happens-before can *shrink* as
//! events are added; and the SC condition of `opencl.cat` can be switched
//! off by a later SC event. Happens-before can also *grow*: a speculative
//! read has no rf edge until its promised write is produced, and then may
//! end a synchronisation edge. On prefixes the model therefore uses `rs_min`
//! (only the rf-chains of RMWs, which no consistent extension can cut) and
//! checks only axioms that stay violated in every extension (a non-atomic
//! read's `w hb r` is not required after such a read: [`axioms`]); the
//! exact model is applied to complete graphs. See [`Phase`].
//!
//! # Deviations
//!
//! Where clmm's own semantics differ from the `.cat` files, following the
//! specification text (each is shown by a test in `tests/`):
//!
//! 1. **Sub-group scope** is inclusive for two work-items of the same
//!    sub-group (specification §3.3.5); the `.cat` files predate sub-groups
//!    and never make it inclusive. (`deviation_sub_group_scope` in
//!    `tests/semantics.rs`.) The compatibility mode follows the `.cat`.
//! 2. **Scopes on local memory**: the specification says scopes wider than
//!    `memory_scope_work_group` act as `memory_scope_work_group` on local
//!    memory, so a device-scope and a work-group-scope atomic on local memory
//!    are inclusive; the `.cat` requires the same scope
//!    (`clmm/MP_local_mixed_scope`). (`deviation_local_scope_widening`.)
//! 3. **Barrier participation**: every work-item of a group must reach the
//!    same barrier call; a work-item that finishes or waits at another call
//!    site while others wait is barrier divergence (the `.cat` only flags an
//!    entry fence that synchronises with nobody, `clmm/bar_partial`).
//!    (`deviation_barrier_partial`.)
//! 4. **Local memory of another work-group** is a usage error (the `.cat`
//!    files do not check it, `herd/thinair`). (`deviation_local_across_groups`.)
//! 5. **Host**: the `.cat` files have no host. The model closure and the
//!    threads of `clmm::host::scope` are host threads; a launch orders the
//!    host's earlier global events before every global event of the kernel,
//!    and the kernel's global events before the host's events after the
//!    launch; command queues (shared by host threads: the order of their
//!    enqueues is a relaxed counter's coherence order, explored), events,
//!    markers, barriers, `finish`, user events, buffer commands (read,
//!    write, map, unmap: command units that copy) and event callbacks
//!    (host threads started by the event's completion, rule 11; their
//!    registration is also ghb-before them, as a spawn is) are the ghb
//!    edges of [`host`] (the spec's list "memory ordering rules: host-side
//!    and device-side commands"). Scopes with a host thread
//!    ([`inclusive_scope::incl_at`]): a host thread is in no device, so
//!    only `memory_scope_all_svm_devices` on fine-grained SVM with atomics
//!    support (`fga`) is inclusive with it; device scope between two
//!    kernels is inclusive only on SVM memory. Non-SVM and coarse-grained
//!    buffers are consistent only at synchronisation points ([`race`]): a
//!    host access and a work-item access to one such buffer race unless
//!    ordered without SVM atomics between host and device, even on
//!    different elements. Fine-grained SVM *without* atomics support (for
//!    the `.cat` simply not `fga`, ordinary global memory) is consistent
//!    only at synchronisation points too, but shared element by element
//!    (the spec: concurrent reads and concurrent updates of
//!    non-overlapping regions are allowed, updates of the same location
//!    are not): a host access and a work-item access to the same element,
//!    one a write, race unless ordered without SVM atomics. On such memory
//!    (as on non-SVM and coarse-grained memory) `memory_scope_all_svm_devices`
//!    is not inclusive with a host thread, as the spec's "behave as if
//!    parameterized with memory_scope_device" implies; between work-items
//!    of two devices clmm keeps the `.cat`'s `s_all^2` on all memory
//!    (`mp_two_devices_all_svm_vs_device` in `tests/litmus_table.rs`),
//!    although that sentence would make them not inclusive.
//!    Device-side enqueue (a work-item enqueueing child kernels and
//!    markers on a `DeviceQueue`, rules 1, 2, 13 and 14 in [`host`]): the
//!    enqueue orders the work-item's earlier updates before the child on
//!    fine-grained SVM only, so `ghb` is per location
//!    ([`hb::Relations::ghb_at`]); as for host enqueues, "sequenced
//!    before the enqueue" is taken as ghb-before it. A kernel completes
//!    after its children. Device scope is inclusive between any two
//!    kernels of one family (a kernel launched from the host and every
//!    kernel it enqueued, directly or not, siblings included), where the
//!    spec names "a parent kernel and any number of child kernels".
//!    (`deviation_host_launch_orders` and `deviation_host_commands_and_svm`
//!    in `tests/semantics.rs`; every rule in `tests/host.rs`, the
//!    fine-grained buffers without atomics in
//!    `fine_grained_without_atomics_*`; device-side enqueue in
//!    `tests/device_enqueue.rs`.)
//! 6. **No out-of-thin-air through control dependencies.** Load buffering
//!    (a read of a po∪rf-later write) is explored by speculation on writes
//!    that an explored execution produced (DESIGN.md §5), several at once
//!    (two independent LB cycles, `lb_two_independent_cycles`; a cycle
//!    through three units whose writes copy what they read,
//!    `lb_three_units_copying_values`, both in `tests/litmus_table.rs`),
//!    and nested: a write whose porf-prefix holds speculative reads is
//!    speculated on once their promises are kept, as deep as the promises
//!    depend on each other (`lb_speculation_nested_n_deep` in
//!    `tests/semantics.rs`), and a promise that the speculated write
//!    depends on but the speculation's start graph cuts away is made
//!    again by the speculation's twin ([`crate::graph::Pin`]).
//!    A backward revisit may delete a kept promise's write (the read is
//!    in the revisiting write's porf-prefix only through that promise,
//!    [`crate::graph::Graph::revisit_prefix_into`]), so the order in which
//!    the work-items that owe a promise run loses nothing; and each run
//!    makes the speculations that wait for its graph's pending promises
//!    again, so one whose promise the run that pushed an alternative
//!    broke is not lost in the alternative that keeps it.
//!    `tests/lb_differential.rs` counts 13,000 random programs with
//!    constant stores and 12,000 with stores of a loaded value plus one
//!    (2,000 of them with 3-5 accesses per work-item; 40,000 of those
//!    tried once) against a brute force, all equal. A chain deeper than
//!    `Config::nesting_limit`, 32, would stop the run with
//!    `FailureKind::ExplorationLimit` (the deepest chain in clmm's tests
//!    is 5). Values are never invented. The
//!    `.cat` model has no dependencies and also accepts cycles
//!    in which a write exists only because a read read that very write
//!    (`if (r0) y = 1;` on both sides): clmm does not explore those
//!    (`c11/auto/cyc`, `seq2`, `roachmotel2`, `strengthen2`,
//!    `linearisation2`, `overhauling/example7b`, `herd/CT_wsq2`;
//!    `deviation_no_thin_air` in `tests/semantics.rs`). The specification
//!    asks implementations not to produce such values (C11 §7.17.3p10,
//!    which OpenCL C 2.0 follows). `Config::thin_air` switches this off:
//!    plain loads then also read given values from a write another
//!    work-item must produce later (the litmus front end's compatibility
//!    mode passes the test's constants, and agrees with the reference on
//!    those tests).
//! 7. **RMW and successful compare-exchange reads do not speculate by
//!    default** (failing compare-exchanges do): load buffering whose
//!    cycle needs the read part of an RMW (which must read its immediate
//!    coherence predecessor) to read a po∪rf-later write is not explored,
//!    as with RMWs on both sides of LB. Plain and atomic loads do
//!    speculate, so a cycle with a load on it is mostly found (the load
//!    speculates, and the RMW reads as an ordinary read: in a speculative
//!    run the units that owe a promised write go last), but not always:
//!    a load speculates on a write only from an explored graph where the
//!    write follows it, and where every such graph has an RMW read reading
//!    a po∪rf-later write, that load's speculation is not made either
//!    (wide seeds 21149, 24027 and 34836 of `tests/scoped_differential.rs`,
//!    `load_speculation_that_needs_an_rmw_speculation` there: 34 of 35
//!    shrunk, all 44 with the option). No test of the conformance suite
//!    needs it. (`rmw_reads_speculate` and `lb_with_rmw_in_first_item` in
//!    `tests/semantics.rs`.) An RMW read
//!    that succeeds on the value its unit's previous read of the location
//!    reads from a pending promise may read that promise too (session 42,
//!    `Engine::push_read_promised` in `explore::revisit`): `old = load(x);
//!    compare_exchange(x, old, new)` reading one write porf-after both,
//!    whose cycle runs through the load as well. Until then the default
//!    mode missed such executions without a note (wide seed 88786 of
//!    `tests/scoped_differential.rs`, 125 of 126). The work-stealing
//!    kernel pays for it in blocked runs (2,188 to 8,375; with two tasks
//!    pushed in the kernel about 4 to 20 s), the TTAS lock too (161 to
//!    450), with no execution more.
//!    `Config::speculate_rmw` (`CLMM_SPECULATE_RMW=1`, session 36) lifts
//!    it: the write part of an RMW whose read reads a promise takes a
//!    coherence place of its own, with the placements of a plain write,
//!    and the promised write goes right before it once produced (O-Rmw);
//!    an RMW read speculates only on a write it reaches through po and rf
//!    edges into RMW and compare-exchange reads with one of those rf edges
//!    on another location (`rmw_cycle_reach` in `explore::speculation`: a
//!    cycle with a load on it is the load's to close, one whose rf edges
//!    all lie on the location breaks `coh(hb)`; leaving out the writes it
//!    happens before lost 2 of 36 executions at the wide RA sweep's seed
//!    4556). With it, `tests/ra_rmw_differential.rs`
//!    counts every consistent graph, cycles through RMW reads alone
//!    included: seeds 0..300,000 agree, and
//!    so do the longer programs (`RA_SHAPE=wide`) of seeds 0..3,000; of
//!    3,000..8,000 two differed, seed 4556 (35 of 36, missed with every
//!    RMW read speculating too) and 6802 (2,502 of 2,504): the write part
//!    of an RMW whose read part read a promise was marked speculative
//!    like it, a promise pending for ever, and the speculations of every
//!    later write with it in its porf-prefix waited for it and were never
//!    made (session 42, `three_reads_on_cycles_at_once`). It is off because of what it costs where RMWs and
//!    compare-exchanges meet on two locations: the wide RA sweep's seed
//!    2853 (four work-items, eight RMWs) explores its 19,835 executions
//!    with 4.8 million blocked runs in 165 s, against 14,760 with 30,000
//!    in 0.8 s without it; seed 142 of the wide scoped sweep (CAS loops on
//!    two locations) takes 35 s; the whole wide scoped sweep (0..10,000),
//!    5 minutes without it, did not finish in 25. The kernels of
//!    `examples/` pay little (the work-stealing deque 1,918 blocked runs
//!    become 2,024). Without the path rule the wide RA sweep's seed 471
//!    had 1,941,798 blocked runs for its 5,400 executions, with it 49,504.
//!
//!    Not silently: a run that met an RMW read in the porf-prefix of a
//!    write of its location, on such a path, says so
//!    (`Stats::rmw_cycles_unexplored`, and a note on stderr from
//!    `Builder::check`): the executions it leaves out may exist. That is
//!    where the option would make an RMW read's speculation, and the
//!    default mode explores the option's runs but for those that descend
//!    from one, so every execution it leaves out comes with the note,
//!    those of a load's speculation that needs an RMW read's (above)
//!    included. The differential tests hold the default mode to it: a
//!    program where it finds fewer executions than the brute force passes
//!    only if the run said so and the option finds exactly the brute
//!    force's count with the cycles through RMW reads (`noted_gap` in
//!    `tests/scoped_differential.rs`, session 43). A
//!    histogram is the plainest case (`histogram_rmw_cycles` in
//!    `tests/semantics.rs`: three work-items each add 1 to two bins, in
//!    opposite orders; 22 of the 36 executions by default, all 36 with
//!    the option). The cost of the option grows fast with such kernels:
//!    four work-items, 244 executions by default in 6 ms, 576 with the
//!    option in 2.2 s (96,198 blocked runs); five, 4,548 in 0.14 s by
//!    default, and with the option the 14,400 were not done in 10
//!    minutes (session 37). The work-stealing kernels of
//!    `tests/kernels.rs` get the note, and the option finds no execution
//!    more there.
//!
//!    `tests/ra_rmw_differential.rs` by default counts the graphs without
//!    a cycle through RMW reads alone (an RMW read that reads what its
//!    unit's previous read of the location reads, a load's promise, counts
//!    as that load: `free_reads` in `tests/differential`) against the same
//!    brute force: the
//!    1,500 of the suite agree, and of 1,500,000 tried once all but 1
//!    until session 37, which closed it (`owing_units_that_read_a_promise_go_first_too`
//!    there: each speculation is also explored with the owing units that
//!    read a promise scheduled first, `owing_first_matters` in
//!    `explore::speculation`). Longer programs (`RA_SHAPE=wide`)
//!    missed executions in 1 of the first 12,000 until session 25, when a
//!    pruned alternative stopped leaving its change in the graph that
//!    later speculations start from (`pruned_alternative_leaves_the_graph_as_it_was`).
//!    Since session 38 no sweep of the default mode shows a gap (RA
//!    0..700,000 and wide 0..10,000, the scoped sweep below, the plain
//!    loads and stores of `tests/lb_differential.rs`); they are samples,
//!    not a proof, so with RMWs in a load-buffering cycle clmm may still
//!    miss executions.
//!
//!    A compare-exchange that fails is a load, and speculates as one
//!    (`Config::speculate_compare_exchange`, on by default since session
//!    35), whether it succeeded or failed in the graph speculated from
//!    (the rerun makes it fail: its write part is cut away with what
//!    follows it). Promises name a write by its position in its unit, so
//!    a speculated compare-exchange that fails where it succeeded, or
//!    (with `speculate_rmw`) succeeds where it failed, moves the promised
//!    positions after it in its unit (`shift_positions`, session 36: the
//!    hash table of `examples/` 763 blocked runs became 732). A
//!    compare-exchange before a promised write in another unit that
//!    changes outcome in the rerun still leaves the promise naming the
//!    wrong event, and the run ends blocked (seed 17672 of the scoped
//!    sweep with `CLMM_SPECULATE_RMW=1` and failing compare-exchanges not
//!    speculating, shrunk: the promised `Add y` after a `Cas(x,1,1)` that
//!    fails in the rerun). A weak compare-exchange that succeeds on the
//!    promised value is not also made to fail spuriously on it; one that
//!    reads its unit's previous read's promise (`Engine::push_read_promised`)
//!    is, as on any write it reads (`Item::Spurious` in `explore`).
//!    `tests/scoped_differential.rs` (fences, seq_cst, scopes, plain
//!    memory, barriers and strong compare-exchanges against a brute force
//!    over the same axioms, which counts every cycle through a failing
//!    compare-exchange) agrees on seeds 0..200,000 and on the first
//!    20,000 longer programs (`SCOPED_SHAPE=wide`) since session 38; of
//!    the next 10,000 two differed, both closed: 29978, 2 of 52 missed
//!    (`plain_load_with_a_promise_outside_its_past_is_maximal`, session
//!    38), and 28331, two porf-cyclic executions counted twice because
//!    their runs added two plain stores in different orders and the
//!    fingerprint that counts such an execution once kept that order
//!    (`plain_store_order_is_no_part_of_an_execution`, session 39:
//!    `Graph::execution_fingerprint`). Of wide seeds 30,000..40,000 one
//!    differed, 38638 (53 of 55): a plain load with a pending promise in
//!    its porf-prefix was not maximal though no write of its location
//!    could come to happen before the owed write (session 39,
//!    `plain_store_of_an_ended_unit_stays_out_of_a_promise`,
//!    `Engine::out_of_reach` in `explore::revisit`); of 40,000..50,000
//!    one differed, 43303 (80 of 84: a compare-exchange read that a
//!    speculation's start graph kept as a promise, `Event::kept` in
//!    `graph`, was maximal only as the read a revisit changes, and the
//!    revisit that deletes it was not made; session 40,
//!    `kept_promise_read_is_deleted`), and 50,000..60,000 agree. The
//!    narrower programs agree on seeds 0..400,000 (session 39); after
//!    the session-40 change, wide 0..20,000 and 40,000..60,000 and
//!    narrow 0..200,000 were swept again and agree. Wide 60,000..70,000
//!    and narrow 400,000..600,000 agree; of wide 70,000..80,000 two
//!    differed, closed in session 40: 78512 (198 of 205) and 75560 (936
//!    of 969), a plain load deleted by a revisit in a speculative run
//!    whose choice was undecided with a promise pending that the
//!    revisiting write's own unit owes: the revisiting write itself
//!    (`promise_kept_by_the_revisiting_write`) or a later write of its
//!    unit (`promise_owed_by_the_revisiting_unit`; `Engine::maximal` in
//!    `explore::revisit`). With session 41's CoRR doom (`Doom` in
//!    `explore`) the default mode agrees on narrow 0..200,000 and wide
//!    0..30,000 and 60,000..80,000, and the option-off differences are
//!    the same programs with the same counts. Of wide 80,000..95,000 one
//!    differed, 88786 (17 of 18 under the spec's SC axiom): a retrying
//!    compare-exchange needed to read the promise its unit's first one
//!    read, which only loads were offered
//!    (`retrying_compare_exchange_reads_the_promise`, session 41). With
//!    that closed it still missed 1 of 126 (both SC axioms) until session
//!    42: a load and a succeeding compare-exchange of one work-item both
//!    reading a write porf-after them, which only a speculation of the
//!    RMW read reached (`load_and_compare_exchange_read_one_promise`).
//!    Until then speculative runs missed executions on 8044 (98 of 100
//!    shrunk: an RMW read was not offered the writes below its coherence
//!    floor, though only such an inconsistent read gave its write part
//!    the value a needed speculation promised; `rmw_below_its_floor_promises_a_needed_value`,
//!    `Engine::speculates_below_floor` in `explore::revisit`) and on
//!    wide 6095 (50 of 52: a read a speculation's start graph kept as a
//!    promise was never revisited; `kept_promise_read_is_revisited`,
//!    `Event::kept` in `graph`), and on 32620 until session 37
//!    (`owing_first_matters` in `explore::speculation`). With the option off
//!    (`CLMM_SPECULATE_CAS=0`) a cycle that needs a failing
//!    compare-exchange to read a write that depends on it is found only
//!    when a load on the cycle speculates from a graph where a revisit
//!    already made the compare-exchange read that write (it is then kept
//!    as a promise), so some such executions are missed, and some cycles
//!    through compare-exchange and RMW reads alone, which the brute force
//!    without the option leaves out, are explored; the sweep then differs
//!    on 4 programs of seeds 0..60,000 and 3 of the wide ones
//!    (`failed_compare_exchange_cycles_known_gap` pins one of each). Not
//!    silently since session 43: a run where a compare-exchange failing on
//!    a write's value was in that write's porf-prefix says so
//!    (`Stats::cas_cycles_unexplored`, a note on stderr), and the sweep
//!    holds that mode to it (`noted_cas_gap`; the executions it finds
//!    beyond its brute force's count must be consistent ones,
//!    `beyond_failing_cas_cycles`). The
//!    option was off until session 35 because CAS retry loops paid for it
//!    in speculative runs that end blocked, without a complete execution
//!    more on any kernel of the tests (session 34: the Treiber stack 1,912
//!    blocked runs against 352, a 3-unit spin lock 12,382 against 215).
//!    A kernel whose only atomic location is the lock or the stack's head
//!    no longer speculates at all (no cycle can pass through it,
//!    `explore::Engine::coherence_isolated`), which took those costs away;
//!    what is left: the hash table of `examples/` 732 blocked runs against
//!    20, the work-stealing kernel 1,918 against 575, with two tasks
//!    pushed in the kernel 26,116 against 17,426 (4.8 to 6.9 s, session
//!    35). A retry that reads the initial lock value after the CAS read a
//!    promise is doomed by coherence, but dropping what depends on it lost
//!    an execution (`doomed_reads_are_not_dooms` in
//!    `tests/scoped_differential.rs`) until session 41, when such a retry,
//!    failing on the promised value, may read the promise as a load may
//!    (the hash table 910 to 1,254 blocked runs, the spin lock 9 to 12).
//! 8. **Collectives carry no memory fence.** The work-group and sub-group
//!    collectives (`work_group_reduce_add`, `work_group_broadcast`, ...;
//!    the `.cat` files have none) are barriers whose entry and exit fences
//!    have no flags, plus the exchange of values: they order execution
//!    (nobody continues before all arrived) but no memory access of one
//!    work-item before another's. This follows the memory ordering rules
//!    ("Memory ordering rules: work-group functions",
//!    `shared/spec/004_8d269728d13116e5.txt`), which give fences to
//!    barriers only and say of the other work-group functions only that a
//!    contributed value is produced before the function starts; the
//!    execution model's summary (§3.2, same file: all work-items "must
//!    execute the work-group function and complete reads and writes to
//!    memory before any are allowed to continue") could be read as a fence,
//!    which clmm does not assume: a program that relies on a collective to
//!    order memory is reported as racy; use a barrier. Their entry fences
//!    are exempt from `bd` (they synchronise with nobody by construction);
//!    participation is checked by the runtime as for barriers (3.), and
//!    members that call different collectives at one instance are barrier
//!    divergence. (`collective_orders_no_memory` in `tests/collectives.rs`.)
//! 9. **Sub-group barriers** (`sub_group_barrier`, `cl_khr_subgroups`; the
//!    `.cat` files have none) synchronise the members of one sub-group as a
//!    work-group barrier does its work-group's (`bar_sw` over the
//!    sub-group), and `bd` asks for an entry fence that synchronises with
//!    another member of its *sub-group*: the barrier of a sub-group of one
//!    work-item (the last of a work-group the sub-group size does not
//!    divide) is not divergence. (`sub_group_barrier_in_a_sub_group_of_one`
//!    in `tests/collectives.rs`, `model::barrier::subject_to_bd`.)

pub mod axioms;
pub mod barrier;
pub mod hb;
pub mod host;
pub mod inclusive_scope;
pub mod matrix;
pub mod race;
pub mod release_sequence;
pub mod sc;
pub mod sw;
pub mod vclock;

use crate::graph::{Graph, Kind, LocInfo, Region};
use crate::ids::{EventId, UnitId};
use clmm_atomic::{FenceFlags, Order, Scope};
use matrix::Matrix;

/// Which SC axiom is in force.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum ScModel {
    /// `opencl.cat`: the SC axiom applies only to executions whose SC events
    /// are all device-scope on non-fga memory, or all all-svm-devices scope
    /// on fga memory (`S_cond1 | S_cond2`). The default.
    #[default]
    Spec,
    /// `opencl_scopedsc.cat`: SC order restricted to inclusive pairs, always.
    Scoped,
}

/// The semantics a run checks against.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Semantics {
    /// The SC axiom.
    pub sc: ScModel,
    /// The reference's rules (litmus compatibility mode): no sub-group or
    /// local-memory scope deviations.
    pub compat: bool,
}

/// What the check is applied to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// A prefix of an execution still being explored: only conditions that
    /// every consistent extension also violates (`rs_min`, no `opencl.cat`
    /// SC condition, no visibility of non-atomic reads beyond `hb`, and
    /// none needing `hb` that a pending promise's `sw` may yet add).
    Prefix,
    /// A complete execution: the exact model.
    Complete,
}

/// An axiom of the model that an execution violates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Violation {
    /// `irreflexive ghb as O-HbG`
    HbG,
    /// `irreflexive lhb as O-HbL`
    HbL,
    /// `irreflexive coh(ghb) as O-CohG`
    CohG,
    /// `irreflexive coh(lhb) as O-CohL`
    CohL,
    /// `irreflexive rf; (ghb | lhb) as O-Rf`
    Rf,
    /// `empty (rf;[G & nonatomicloc]) \ vis(ghb) as O-NaRfG`
    NaRfG,
    /// `empty (rf;[L & nonatomicloc]) \ vis(lhb) as O-NaRfL`
    NaRfL,
    /// `irreflexive rf | (mo;mo;rf^-1) | (mo;rf) as O-Rmw`
    Rmw,
    /// `acyclic (mo_sc^2) & scp & (S_cond1|S_cond2) as O-Ssimp` /
    /// `acyclic (mo_sc^2) & scp & incl as O-Sscoped`
    Sc,
}

impl Violation {
    /// The axiom's name in the `.cat` file.
    pub fn name(self) -> &'static str {
        match self {
            Violation::HbG => "O-HbG",
            Violation::HbL => "O-HbL",
            Violation::CohG => "O-CohG",
            Violation::CohL => "O-CohL",
            Violation::Rf => "O-Rf",
            Violation::NaRfG => "O-NaRfG",
            Violation::NaRfL => "O-NaRfL",
            Violation::Rmw => "O-Rmw",
            Violation::Sc => "O-Ssimp/O-Sscoped",
        }
    }
}

/// Per-event attributes in dense order (initial writes first).
#[derive(Clone, Debug)]
pub struct Attr {
    /// The unit, `None` for initial writes.
    pub unit: Option<UnitId>,
    /// The event kind (`Write` for initial writes).
    pub kind: Kind,
    /// Initial write.
    pub init: bool,
    /// Location index, for accesses.
    pub loc: Option<usize>,
    /// In the global region (`G`).
    pub g: bool,
    /// In the local region (`L`).
    pub l: bool,
    /// Order of atomics and fences; `None` for plain accesses and others.
    pub order: Option<Order>,
    /// Scope (`WorkItem` for plain accesses and initial writes).
    pub scope: Scope,
    /// Dense index of the write read from.
    pub rf: Option<usize>,
    /// Part of a read-modify-write (`R & W`).
    pub rmw: bool,
    /// Fence flags.
    pub flags: FenceFlags,
    /// Position in program order.
    pub po: u32,
}

impl Attr {
    /// The attributes of event `e`, the `po`-th of unit `unit` (its `rf`
    /// is left to the caller, which knows how it numbers events).
    pub fn of(e: &crate::graph::Event, unit: UnitId, po: u32, locs: &[LocInfo]) -> Attr {
        let (g, l) = match e.kind {
            k if k.is_access() => {
                let r = locs[e.loc.expect("access has a location").0 as usize].region;
                (r == Region::Global, matches!(r, Region::Local(_)))
            }
            k if k.is_fence() => (e.flags.contains(FenceFlags::GLOBAL), e.flags.contains(FenceFlags::LOCAL)),
            k if k.is_host_sync() => (true, false),
            _ => (false, false),
        };
        let (order, scope) = match e.atomic {
            Some((o, s)) => (Some(o), s),
            None => (None, Scope::WorkItem),
        };
        Attr {
            unit: Some(unit),
            kind: e.kind,
            init: false,
            loc: e.loc.map(|l| l.0 as usize),
            g,
            l,
            order,
            scope,
            rf: None,
            rmw: matches!(e.kind, Kind::RmwRead | Kind::RmwWrite),
            flags: e.flags,
            po,
        }
    }

    /// `R` (reads and RMW read parts).
    pub fn is_read(&self) -> bool {
        self.kind.is_read()
    }
    /// `W` (writes, RMW write parts, initial writes).
    pub fn is_write(&self) -> bool {
        self.kind.is_write()
    }
    /// `F` (fences and barrier fences).
    pub fn is_fence(&self) -> bool {
        self.kind.is_fence()
    }
    /// `rel` of `opencl_base.cat`.
    pub fn is_rel(&self) -> bool {
        (self.is_write() || self.is_fence()) && self.order.is_some_and(Order::is_release)
    }
    /// `acq` of `opencl_base.cat`.
    pub fn is_acq(&self) -> bool {
        (self.is_read() || self.is_fence()) && self.order.is_some_and(Order::is_acquire)
    }
    /// `mo_sc`.
    pub fn is_sc(&self) -> bool {
        self.order == Some(Order::SeqCst)
    }
}

/// One execution graph in dense form, with the attributes every relation
/// needs.
pub struct Ctx<'a> {
    /// The graph.
    pub graph: &'a Graph,
    /// Locations.
    pub locs: &'a [LocInfo],
    /// The semantics.
    pub sem: Semantics,
    /// Dense index → event id.
    pub ids: Vec<EventId>,
    /// Dense attributes.
    pub attr: Vec<Attr>,
    base: Vec<usize>,
    /// Coherence order per location, as dense indices (initial write first).
    pub co: Vec<Vec<usize>>,
    /// Position of each write in its location's coherence order.
    pub co_pos: Vec<usize>,
    /// The readers of each event (`rf^-1`), as ranges of `reader_list`.
    reader_start: Vec<u32>,
    reader_list: Vec<u32>,
}

impl<'a> Ctx<'a> {
    /// Index the graph.
    pub fn new(graph: &'a Graph, locs: &'a [LocInfo], sem: Semantics) -> Ctx<'a> {
        let nl = locs.len();
        let mut base = Vec::with_capacity(graph.units.len());
        let mut n = nl;
        for u in &graph.units {
            base.push(n);
            n += u.events.len();
        }
        let mut ids = Vec::with_capacity(n);
        let mut attr = Vec::with_capacity(n);
        for (l, info) in locs.iter().enumerate() {
            ids.push(EventId::init(clmm_atomic::backend::LocId(l as u32)));
            attr.push(Attr {
                unit: None,
                kind: Kind::Write,
                init: true,
                loc: Some(l),
                g: info.region == Region::Global,
                l: matches!(info.region, Region::Local(_)),
                order: None,
                scope: Scope::WorkItem,
                rf: None,
                rmw: false,
                flags: FenceFlags::empty(),
                po: 0,
            });
        }
        let mut ctx = Ctx { graph, locs, sem, ids, attr, base, co: Vec::new(), co_pos: vec![0; n], reader_start: Vec::new(), reader_list: Vec::new() };
        for (u, unit) in graph.units.iter().enumerate() {
            for (i, e) in unit.events.iter().enumerate() {
                ctx.ids.push(EventId { unit: UnitId(u as u32), index: i as u32 });
                ctx.attr.push(Attr::of(e, UnitId(u as u32), i as u32, locs));
            }
        }
        for i in nl..ctx.ids.len() {
            let id = ctx.ids[i];
            // A speculative read whose write is not produced yet has no
            // rf edge until it is.
            if let Some(w) = graph.ev(id).rf.filter(|&w| graph.contains(w)) {
                ctx.attr[i].rf = Some(ctx.index(w));
            }
        }
        let mut co = vec![Vec::new(); nl];
        for (l, c) in co.iter_mut().enumerate() {
            c.push(l);
            if let Some(ws) = graph.co.get(l) {
                c.extend(ws.iter().map(|&w| ctx.index(w)));
            }
            for (p, &w) in c.iter().enumerate() {
                ctx.co_pos[w] = p;
            }
        }
        ctx.co = co;
        let mut start = vec![0u32; n + 1];
        for a in &ctx.attr {
            if let Some(w) = a.rf {
                start[w + 1] += 1;
            }
        }
        for i in 0..n {
            start[i + 1] += start[i];
        }
        let mut fill = start.clone();
        let mut list = vec![0u32; start[n] as usize];
        for (r, a) in ctx.attr.iter().enumerate() {
            if let Some(w) = a.rf {
                list[fill[w] as usize] = r as u32;
                fill[w] += 1;
            }
        }
        ctx.reader_start = start;
        ctx.reader_list = list;
        ctx
    }

    /// The reads that read from `w`, in index order.
    pub fn readers(&self, w: usize) -> impl Iterator<Item = usize> + '_ {
        self.reader_list[self.reader_start[w] as usize..self.reader_start[w + 1] as usize].iter().map(|&r| r as usize)
    }

    /// Dense index of an event.
    pub fn index(&self, e: EventId) -> usize {
        if e.is_init() {
            e.index as usize
        } else {
            self.base[e.unit.index()] + e.index as usize
        }
    }

    /// Number of events, initial writes included.
    pub fn n(&self) -> usize {
        self.ids.len()
    }

    /// `sb` (program order) between two events.
    pub fn sb(&self, a: usize, b: usize) -> bool {
        let (x, y) = (&self.attr[a], &self.attr[b]);
        x.unit.is_some() && x.unit == y.unit && x.po < y.po
    }

    /// Whether location `l` is non-atomic (`nonatomicloc`).
    pub fn nonatomic(&self, l: usize) -> bool {
        !self.locs[l].atomic
    }

    /// `mo`: coherence order on atomic locations only
    /// (`let mo = co & ((!nonatomicloc)^2)`).
    pub fn mo(&self, a: usize, b: usize) -> bool {
        let (x, y) = (&self.attr[a], &self.attr[b]);
        x.is_write() && y.is_write() && x.loc == y.loc && x.loc.is_some_and(|l| !self.nonatomic(l)) && self.co_pos[a] < self.co_pos[b]
    }
}

/// The result of checking one graph.
#[derive(Debug, Default)]
pub struct Verdict {
    /// The first axiom violated, if any.
    pub violation: Option<Violation>,
    /// Data races (`dr`), as pairs of events (complete phase only).
    pub races: Vec<(EventId, EventId)>,
    /// Barrier entry fences that diverge (`bd`, complete phase only).
    pub divergence: Vec<EventId>,
}

/// Whether the write `w` that read `r` reads from is in the graph. A
/// speculative read names its write before the write exists; until the
/// explorer checks the promise, that id may also be another event. (The
/// vector clocks and `axioms::rmw_atomic_at` skip such a read.)
pub(crate) fn produced(g: &Graph, r: EventId, w: EventId) -> bool {
    w.is_init() || (g.contains(w) && g.ev(w).kind.is_write() && g.ev(w).loc == g.ev(r).loc)
}

/// Check `graph` against the model.
pub fn check(graph: &Graph, locs: &[LocInfo], sem: Semantics, phase: Phase) -> Verdict {
    let ctx = Ctx::new(graph, locs, sem);
    let edges = hb::Relations::edges(&ctx, phase);
    // On a prefix, the current happens-before (with `rs`) is needed only for
    // the reads of non-atomic locations, and only when a release sequence
    // makes it differ from the `rs_min` one.
    let cur = if phase == Phase::Prefix && ctx.attr.iter().any(|a| a.rf.is_some() && a.loc.is_some_and(|l| ctx.nonatomic(l))) {
        let e = hb::Relations::edges(&ctx, Phase::Complete);
        (e != edges).then(|| hb::Relations::close(&ctx, e))
    } else {
        None
    };
    let rels = hb::Relations::close(&ctx, edges);
    let mut v = Verdict { violation: axioms::check(&ctx, &rels, cur.as_ref(), phase), ..Verdict::default() };
    if v.violation.is_none() && !sc::holds(&ctx, &rels, phase) {
        v.violation = Some(Violation::Sc);
    }
    if v.violation.is_none() && phase == Phase::Complete {
        v.races = race::races(&ctx, &rels).into_iter().map(|(a, b)| (ctx.ids[a], ctx.ids[b])).collect();
        v.divergence = barrier::divergence(&ctx, &rels).into_iter().map(|e| ctx.ids[e]).collect();
    }
    v
}

/// The happens-before relations of a graph, for the explorer (visibility of
/// non-atomic reads) and reports.
pub fn relations<'a>(ctx: &Ctx<'a>, phase: Phase) -> hb::Relations {
    hb::Relations::compute(ctx, phase)
}

/// The write whose value each location holds at the end of complete
/// execution `graph`, by location. An atomic location holds its
/// co-maximal write's. A non-atomic location has no coherence order
/// (`let mo = co & ((!nonatomicloc)^2)`, `opencl_base.cat` line 4): it
/// holds the value of the visible side effect of a read after every
/// event (spec excerpt `000_71b3c00840afe3ec.txt`, line 81: "the value of
/// a non-atomic scalar object M ... shall be the value stored by the
/// visible side effect"), the write that no other write of it follows in
/// happens-before. The graph's order of a non-atomic location is only the
/// order in which the run added its writes: a run that speculated an
/// acquire load on the release write that orders two plain stores may add
/// the later one first (`plain_final_value_follows_happens_before` in
/// `tests/litmus_conformance.rs`). Where several writes are happens-before
/// maximal, they race (the report says so) and the last added is taken.
/// Happens-before is computed only when a non-atomic location has two
/// writes or more.
pub fn final_writes(graph: &Graph, locs: &[LocInfo], sem: Semantics) -> Vec<EventId> {
    let mut out: Vec<EventId> = (0..locs.len()).map(|l| graph.co_max(clmm_atomic::backend::LocId(l as u32))).collect();
    let contested = |l: usize| !locs[l].atomic && graph.co.get(l).is_some_and(|c| c.len() > 1);
    if !(0..locs.len()).any(contested) {
        return out;
    }
    let ctx = Ctx::new(graph, locs, sem);
    let rels = hb::Relations::compute(&ctx, Phase::Complete);
    for (l, last) in out.iter_mut().enumerate().filter(|&(l, _)| contested(l)) {
        let writes = &graph.co[l];
        let later = |a: EventId| writes.iter().any(|&b| rels.hb_at(&ctx, l, ctx.index(a), ctx.index(b)));
        if let Some(&w) = writes.iter().rev().find(|&&w| !later(w)) {
            *last = w;
        }
    }
    out
}

/// A helper for reports: the matrix type.
pub type Rel = Matrix;
