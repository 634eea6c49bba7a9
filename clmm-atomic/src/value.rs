//! Values stored in clmm memory, and the arithmetic of read-modify-writes.
//!
//! The checker stores every value as 64 bits; [`Value`] converts to and from
//! those bits, and [`RmwOp::apply`] computes what an RMW writes, in the width
//! and signedness of the atomic type ([`NumTy`]).

/// A plain value that can live in clmm memory (a `GlobalBuffer`, a
/// `LocalBuffer`, or an atomic).
pub trait Value: Copy + Send + Sync + std::fmt::Debug + 'static {
    /// The value as 64 bits.
    fn to_bits(self) -> u64;
    /// The value back from its 64 bits.
    fn from_bits(bits: u64) -> Self;
}

macro_rules! int_value {
    ($($t:ty => $u:ty),*) => {$(
        impl Value for $t {
            fn to_bits(self) -> u64 { self as $u as u64 }
            fn from_bits(bits: u64) -> Self { bits as $u as $t }
        }
    )*};
}
int_value!(u8 => u8, u16 => u16, u32 => u32, u64 => u64, usize => usize,
           i8 => u8, i16 => u16, i32 => u32, i64 => u64, isize => usize);

impl Value for bool {
    fn to_bits(self) -> u64 {
        self as u64
    }
    fn from_bits(bits: u64) -> Self {
        bits != 0
    }
}
impl Value for f32 {
    fn to_bits(self) -> u64 {
        f32::to_bits(self) as u64
    }
    fn from_bits(bits: u64) -> Self {
        f32::from_bits(bits as u32)
    }
}
impl Value for f64 {
    fn to_bits(self) -> u64 {
        f64::to_bits(self)
    }
    fn from_bits(bits: u64) -> Self {
        f64::from_bits(bits)
    }
}

/// The numeric type of an atomic, which decides the arithmetic of its RMWs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NumTy {
    /// 32-bit unsigned (`atomic_uint`)
    U32,
    /// 32-bit signed (`atomic_int`)
    I32,
    /// 64-bit unsigned (`atomic_ulong`)
    U64,
    /// 64-bit signed (`atomic_long`)
    I64,
    /// 32-bit float (`atomic_float`)
    F32,
}

impl NumTy {
    /// The OpenCL C name of the type (`uint`, `int`, `ulong`, `long`,
    /// `float`), as reports name it.
    pub fn cl_name(self) -> &'static str {
        match self {
            NumTy::U32 => "uint",
            NumTy::I32 => "int",
            NumTy::U64 => "ulong",
            NumTy::I64 => "long",
            NumTy::F32 => "float",
        }
    }
}

/// A value type of the work-group and sub-group collectives
/// (`WorkItem::work_group_reduce_add` and the others): the numeric types of
/// clmm's atomics (`int`, `uint`, `long`, `ulong`, `float`), each with the
/// [`NumTy`] that decides its arithmetic.
pub trait NumValue: Value {
    /// Its numeric type.
    const TY: NumTy;
}

impl NumValue for i32 {
    const TY: NumTy = NumTy::I32;
}
impl NumValue for u32 {
    const TY: NumTy = NumTy::U32;
}
impl NumValue for i64 {
    const TY: NumTy = NumTy::I64;
}
impl NumValue for u64 {
    const TY: NumTy = NumTy::U64;
}
impl NumValue for f32 {
    const TY: NumTy = NumTy::F32;
}

/// The operation of a read-modify-write (`atomic_fetch_<op>`,
/// `atomic_exchange`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RmwOp {
    /// `atomic_exchange`
    Xchg,
    /// `atomic_fetch_add`
    Add,
    /// `atomic_fetch_sub`
    Sub,
    /// `atomic_fetch_and`
    And,
    /// `atomic_fetch_or`
    Or,
    /// `atomic_fetch_xor`
    Xor,
    /// `atomic_fetch_min`
    Min,
    /// `atomic_fetch_max`
    Max,
}

impl RmwOp {
    /// The value written by this RMW when it reads `old` with operand `arg`.
    pub fn apply(self, ty: NumTy, old: u64, arg: u64) -> u64 {
        use NumTy::*;
        match ty {
            U32 => {
                let (o, a) = (old as u32, arg as u32);
                (match self {
                    RmwOp::Xchg => a,
                    RmwOp::Add => o.wrapping_add(a),
                    RmwOp::Sub => o.wrapping_sub(a),
                    RmwOp::And => o & a,
                    RmwOp::Or => o | a,
                    RmwOp::Xor => o ^ a,
                    RmwOp::Min => o.min(a),
                    RmwOp::Max => o.max(a),
                }) as u64
            }
            I32 => {
                let (o, a) = (old as u32 as i32, arg as u32 as i32);
                (match self {
                    RmwOp::Xchg => a,
                    RmwOp::Add => o.wrapping_add(a),
                    RmwOp::Sub => o.wrapping_sub(a),
                    RmwOp::And => o & a,
                    RmwOp::Or => o | a,
                    RmwOp::Xor => o ^ a,
                    RmwOp::Min => o.min(a),
                    RmwOp::Max => o.max(a),
                }) as u32 as u64
            }
            U64 => match self {
                RmwOp::Xchg => arg,
                RmwOp::Add => old.wrapping_add(arg),
                RmwOp::Sub => old.wrapping_sub(arg),
                RmwOp::And => old & arg,
                RmwOp::Or => old | arg,
                RmwOp::Xor => old ^ arg,
                RmwOp::Min => old.min(arg),
                RmwOp::Max => old.max(arg),
            },
            I64 => {
                let (o, a) = (old as i64, arg as i64);
                (match self {
                    RmwOp::Xchg => a,
                    RmwOp::Add => o.wrapping_add(a),
                    RmwOp::Sub => o.wrapping_sub(a),
                    RmwOp::And => o & a,
                    RmwOp::Or => o | a,
                    RmwOp::Xor => o ^ a,
                    RmwOp::Min => o.min(a),
                    RmwOp::Max => o.max(a),
                }) as u64
            }
            F32 => {
                let (o, a) = (f32::from_bits(old as u32), f32::from_bits(arg as u32));
                let r = match self {
                    RmwOp::Xchg => a,
                    RmwOp::Add => o + a,
                    RmwOp::Sub => o - a,
                    RmwOp::Min => o.min(a),
                    RmwOp::Max => o.max(a),
                    RmwOp::And | RmwOp::Or | RmwOp::Xor => {
                        panic!("clmm: bitwise {self:?} is not defined on atomic_float")
                    }
                };
                r.to_bits() as u64
            }
        }
    }

    /// The OpenCL C name of the builtin.
    pub fn cl_name(self) -> &'static str {
        match self {
            RmwOp::Xchg => "atomic_exchange",
            RmwOp::Add => "atomic_fetch_add",
            RmwOp::Sub => "atomic_fetch_sub",
            RmwOp::And => "atomic_fetch_and",
            RmwOp::Or => "atomic_fetch_or",
            RmwOp::Xor => "atomic_fetch_xor",
            RmwOp::Min => "atomic_fetch_min",
            RmwOp::Max => "atomic_fetch_max",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn signed_arithmetic_wraps_in_width() {
        assert_eq!(RmwOp::Add.apply(NumTy::I32, (-1i32).to_bits(), 1), 0);
        assert_eq!(i32::from_bits(RmwOp::Min.apply(NumTy::I32, 5, (-3i32).to_bits())), -3);
        assert_eq!(RmwOp::Add.apply(NumTy::U32, u32::MAX as u64, 2), 1);
        assert_eq!(<f32 as Value>::from_bits(RmwOp::Add.apply(NumTy::F32, Value::to_bits(1.5f32), Value::to_bits(2.0f32))), 3.5);
    }
}
