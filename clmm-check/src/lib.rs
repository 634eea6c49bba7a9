//! `clmm-check`: the checker behind clmm (DESIGN.md §2).
//!
//! * [`graph`]: execution graphs (events, po, rf, co, barrier instances).
//! * [`model`]: the OpenCL 2.x consistency model, one module per relation.
//! * [`mod@explore`]: the exploration of execution graphs.
//! * [`runtime`]: coroutines that run the units of execution.
//! * [`report`]: failures and their reports; [`replay`]: replay strings.
//!
//! The user-facing crate talks to the checker only through
//! [`clmm_atomic::backend`] events and [`explore::explore`].

pub mod config;
pub mod dot;
pub mod explore;
pub mod graph;
pub mod ids;
pub mod log;
pub mod model;
pub mod progress;
pub mod replay;
pub mod report;
pub mod runtime;
pub mod watchdog;

pub use config::{Config, Shard};
pub use explore::{explore, BlockedBy, Control, Delivery, ExecutionEnd, FinalLoc, Position, Stats};
pub use model::{ScModel, Semantics};
pub use report::{Failure, FailureKind};
