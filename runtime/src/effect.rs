//! Effects: what a tool may touch, at the type level and at run time.
//!
//! Every tool declares its effects; none is assumed. There are three effects,
//! after λ-Tool's `Read` and `Write` plus `Network` for open-world calls, and
//! `Pure` for none of them.
//!
//! - At the type level each set of effects is one zero-sized marker type:
//!   [`Pure`], [`Read`], [`Write`], [`Network`], [`ReadWrite`], [`ReadNetwork`],
//!   [`WriteNetwork`] and [`ReadWriteNetwork`]. [`Union`] computes the set of
//!   two sets and [`SubsetOf`] is the "allowed" check; a failed check reads
//!   `effect violation: allowed {Read} but got {ReadWrite}`.
//! - At run time an [`EffectSet`] value carries the same information for
//!   catalogs, the dispatcher's gate and the plan checker.
//!
//! The two levels agree: `<M as Effects>::SET` is the run-time set of marker `M`.
//!
//! ```
//! use typed_tools::effect::{EffectSet, Effects, Read, ReadWrite, Union, Write};
//!
//! type Both = <Read as Union<Write>>::Output;
//! assert_eq!(<Both as Effects>::SET, EffectSet::READ | EffectSet::WRITE);
//! assert_eq!(<Both as Effects>::SET, <ReadWrite as Effects>::SET);
//! assert!(EffectSet::READ.is_subset_of(<ReadWrite as Effects>::SET));
//! ```

use std::fmt;
use std::ops::{BitOr, BitOrAssign};

/// A set of effects, as a run-time value.
///
/// ```
/// use typed_tools::effect::EffectSet;
///
/// let rw = EffectSet::READ | EffectSet::WRITE;
/// assert!(EffectSet::READ.is_subset_of(rw));
/// assert!(!EffectSet::NETWORK.is_subset_of(rw));
/// assert_eq!(rw.to_string(), "{Read, Write}");
/// assert_eq!(EffectSet::PURE.to_string(), "{}");
/// assert_eq!("Read, Network".parse::<EffectSet>(), Ok(EffectSet::READ | EffectSet::NETWORK));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct EffectSet(u8);

/// One effect, for iterating over an [`EffectSet`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Effect {
    /// Reads state the tool does not own: a database, a file, an account.
    Read,
    /// Changes state: writes, sends, charges, deletes.
    Write,
    /// Reaches the open world: the internet, another service.
    Network,
}

impl Effect {
    /// Every effect, in canonical order.
    pub const ALL: [Effect; 3] = [Effect::Read, Effect::Write, Effect::Network];

    /// The effect's name as written in `#[tool(effects = ...)]`.
    pub const fn name(self) -> &'static str {
        match self {
            Effect::Read => "Read",
            Effect::Write => "Write",
            Effect::Network => "Network",
        }
    }

    const fn bit(self) -> u8 {
        match self {
            Effect::Read => 1,
            Effect::Write => 2,
            Effect::Network => 4,
        }
    }
}

impl EffectSet {
    /// No effect: a pure tool.
    pub const PURE: EffectSet = EffectSet(0);
    /// `{Read}`.
    pub const READ: EffectSet = EffectSet(Effect::Read.bit());
    /// `{Write}`.
    pub const WRITE: EffectSet = EffectSet(Effect::Write.bit());
    /// `{Network}`.
    pub const NETWORK: EffectSet = EffectSet(Effect::Network.bit());
    /// Every effect: `{Read, Write, Network}`.
    pub const ALL: EffectSet = EffectSet(7);

    /// The set holding just `effect`.
    ///
    /// ```
    /// use typed_tools::effect::{Effect, EffectSet};
    ///
    /// assert_eq!(EffectSet::of(Effect::Write), EffectSet::WRITE);
    /// ```
    pub const fn of(effect: Effect) -> EffectSet {
        EffectSet(effect.bit())
    }

    /// The union of two sets (also `a | b`).
    ///
    /// ```
    /// use typed_tools::effect::{Effect, EffectSet};
    ///
    /// let read_write = EffectSet::READ.union(EffectSet::WRITE);
    /// assert_eq!(read_write, EffectSet::READ | EffectSet::WRITE);
    /// assert_eq!(read_write.to_string(), "{Read, Write}");
    /// ```
    pub const fn union(self, other: EffectSet) -> EffectSet {
        EffectSet(self.0 | other.0)
    }

    /// The effects in both sets.
    ///
    /// ```
    /// use typed_tools::effect::{Effect, EffectSet};
    ///
    /// assert_eq!(EffectSet::ALL.intersection(EffectSet::READ), EffectSet::READ);
    /// ```
    pub const fn intersection(self, other: EffectSet) -> EffectSet {
        EffectSet(self.0 & other.0)
    }

    /// The effects of `self` that are not in `other`: what a tool has that
    /// is not allowed.
    ///
    /// ```
    /// use typed_tools::effect::{Effect, EffectSet};
    ///
    /// assert_eq!((EffectSet::READ | EffectSet::WRITE).difference(EffectSet::READ), EffectSet::WRITE);
    /// ```
    pub const fn difference(self, other: EffectSet) -> EffectSet {
        EffectSet(self.0 & !other.0)
    }

    /// Whether every effect of `self` is in `allowed`.
    ///
    /// ```
    /// use typed_tools::effect::{Effect, EffectSet};
    ///
    /// assert!(EffectSet::READ.is_subset_of(EffectSet::ALL));
    /// assert!(!EffectSet::WRITE.is_subset_of(EffectSet::READ));
    /// assert!(EffectSet::PURE.is_subset_of(EffectSet::PURE));
    /// ```
    pub const fn is_subset_of(self, allowed: EffectSet) -> bool {
        self.0 & !allowed.0 == 0
    }

    /// Whether `effect` is in the set.
    ///
    /// ```
    /// use typed_tools::effect::{Effect, EffectSet};
    ///
    /// assert!(EffectSet::ALL.contains(Effect::Network));
    /// assert!(!EffectSet::READ.contains(Effect::Write));
    /// ```
    pub const fn contains(self, effect: Effect) -> bool {
        self.0 & effect.bit() != 0
    }

    /// Whether the set is empty, that is pure.
    ///
    /// ```
    /// use typed_tools::effect::{Effect, EffectSet};
    ///
    /// assert!(EffectSet::PURE.is_pure());
    /// assert_eq!(EffectSet::PURE.to_string(), "{}");
    /// ```
    pub const fn is_pure(self) -> bool {
        self.0 == 0
    }

    /// Read-only in MCP's sense: the tool does not change its environment.
    ///
    /// ```
    /// use typed_tools::effect::{Effect, EffectSet};
    ///
    /// assert!((EffectSet::READ | EffectSet::NETWORK).is_read_only());
    /// assert!(!EffectSet::WRITE.is_read_only());
    /// ```
    pub const fn is_read_only(self) -> bool {
        !self.contains(Effect::Write)
    }

    /// The effects in the set, in canonical order (`Read`, `Write`, `Network`).
    ///
    /// ```
    /// use typed_tools::effect::{Effect, EffectSet};
    ///
    /// let names: Vec<&str> = (EffectSet::NETWORK | EffectSet::READ).iter().map(Effect::name).collect();
    /// assert_eq!(names, ["Read", "Network"]);
    /// ```
    pub fn iter(self) -> impl Iterator<Item = Effect> {
        Effect::ALL.into_iter().filter(move |e| self.contains(*e))
    }
}

impl BitOr for EffectSet {
    type Output = EffectSet;
    fn bitor(self, rhs: EffectSet) -> EffectSet {
        self.union(rhs)
    }
}

impl BitOrAssign for EffectSet {
    fn bitor_assign(&mut self, rhs: EffectSet) {
        *self = self.union(rhs);
    }
}

impl From<Effect> for EffectSet {
    fn from(effect: Effect) -> EffectSet {
        EffectSet::of(effect)
    }
}

impl FromIterator<Effect> for EffectSet {
    fn from_iter<I: IntoIterator<Item = Effect>>(iter: I) -> EffectSet {
        iter.into_iter()
            .fold(EffectSet::PURE, |set, e| set | EffectSet::of(e))
    }
}

/// Written as λ-Tool writes it: `{}`, `{Read}`, `{Read, Write}`.
impl fmt::Display for EffectSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("{")?;
        for (i, effect) in self.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(effect.name())?;
        }
        f.write_str("}")
    }
}

impl fmt::Debug for EffectSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "EffectSet{self}")
    }
}

/// The error of parsing an [`EffectSet`] from text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownEffect(pub String);

impl fmt::Display for UnknownEffect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown effect `{}`; expected one of: `Pure`, `Read`, `Write`, `Network`",
            self.0
        )
    }
}

impl std::error::Error for UnknownEffect {}

/// Parses `Read`, `Read, Write`, `{Read, Write}`, `{}` or `Pure`.
impl std::str::FromStr for EffectSet {
    type Err = UnknownEffect;
    fn from_str(s: &str) -> Result<EffectSet, UnknownEffect> {
        let inner = s.trim();
        let inner = inner
            .strip_prefix('{')
            .and_then(|rest| rest.strip_suffix('}'))
            .unwrap_or(inner);
        let mut set = EffectSet::PURE;
        for word in inner.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            set |= match word {
                "Pure" => EffectSet::PURE,
                "Read" => EffectSet::READ,
                "Write" => EffectSet::WRITE,
                "Network" => EffectSet::NETWORK,
                other => return Err(UnknownEffect(other.to_owned())),
            };
        }
        Ok(set)
    }
}

mod sealed {
    pub trait Sealed {}
}

/// A set of effects as a type: one of the eight marker types of this module.
///
/// Sealed: the lattice is closed, so that [`Union`] and [`SubsetOf`] are total.
pub trait Effects: sealed::Sealed + Send + Sync + 'static {
    /// The same set as a run-time value.
    const SET: EffectSet;
}

/// The union of two effect sets, computed by the type system.
///
/// [`Pure`] is the identity: `<Pure as Union<E>>::Output` is `E`.
///
/// ```
/// use typed_tools::effect::{Effects, EffectSet, Network, Pure, Read, Union, Write};
///
/// type Plan = <<Read as Union<Write>>::Output as Union<Network>>::Output;
/// assert_eq!(<Plan as Effects>::SET, EffectSet::ALL);
/// assert_eq!(<<Pure as Union<Read>>::Output as Effects>::SET, EffectSet::READ);
/// ```
pub trait Union<Rhs: Effects>: Effects {
    /// The union of `Self` and `Rhs`.
    type Output: Effects;
}

/// `Self` is allowed where `Allowed` is: every effect of `Self` is in `Allowed`.
///
/// This is the bound a toolbox puts on the tools it accepts, and a plan on the
/// tools it calls. When it fails the compiler says which effect is not allowed:
///
/// ```compile_fail
/// use typed_tools::effect::{Read, ReadWrite, SubsetOf};
///
/// fn only_reads<E: SubsetOf<Read>>() {}
/// only_reads::<ReadWrite>(); // error: effect violation: allowed {Read} but got {ReadWrite}
/// ```
#[diagnostic::on_unimplemented(
    message = "effect violation: allowed {{{Allowed}}} but got {{{Self}}}",
    label = "this has effects {{{Self}}}, which are not all in {{{Allowed}}}",
    note = "allow the missing effects where the tool is used, or use a tool whose `#[tool(effects = ...)]` fits {{{Allowed}}}"
)]
pub trait SubsetOf<Allowed: Effects>: Effects {}

macro_rules! effect_sets {
    ($($(#[$doc:meta])* $name:ident = $bits:literal;)*) => {
        $(
            $(#[$doc])*
            #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
            pub struct $name;
            impl sealed::Sealed for $name {}
            impl Effects for $name {
                const SET: EffectSet = EffectSet($bits);
            }
        )*
        effect_sets!(@union [$($name $bits)*] [$($name $bits)*]);
    };
    (@union [$($a:ident $abits:literal)*] $all:tt) => {
        $( effect_sets!(@row $a $abits $all); )*
    };
    (@row $a:ident $abits:literal [$($b:ident $bbits:literal)*]) => {
        $(
            impl Union<$b> for $a {
                type Output = <Bits<{ $abits | $bbits }> as Marker>::Type;
            }
        )*
    };
}

/// Maps a bit pattern to its marker type, so that the union table is computed
/// rather than written out by hand.
#[doc(hidden)]
#[derive(Debug)]
pub struct Bits<const B: u8>;
#[doc(hidden)]
pub trait Marker {
    type Type: Effects;
}

effect_sets! {
    /// No effect at all. The identity of [`Union`].
    Pure = 0;
    /// `{Read}`.
    Read = 1;
    /// `{Write}`.
    Write = 2;
    /// `{Read, Write}`.
    ReadWrite = 3;
    /// `{Network}`.
    Network = 4;
    /// `{Read, Network}`.
    ReadNetwork = 5;
    /// `{Write, Network}`.
    WriteNetwork = 6;
    /// `{Read, Write, Network}`: every effect.
    ReadWriteNetwork = 7;
}

macro_rules! marker_of_bits {
    ($($bits:literal => $name:ident,)*) => {
        $( impl Marker for Bits<$bits> { type Type = $name; } )*
    };
}
marker_of_bits! {
    0 => Pure, 1 => Read, 2 => Write, 3 => ReadWrite,
    4 => Network, 5 => ReadNetwork, 6 => WriteNetwork, 7 => ReadWriteNetwork,
}

// Only the true pairs are listed: an impl guarded by a `where` clause would make
// rustc report the guard instead of the `on_unimplemented` message.
macro_rules! subsets {
    ($($small:ident <= $($big:ident)*;)*) => {
        // `do_not_recommend`: a failed check lists no "other types implement
        // `SubsetOf`" under the message.
        $($( #[diagnostic::do_not_recommend] impl SubsetOf<$big> for $small {} )*)*
        #[cfg(test)]
        #[test]
        fn subset_table_agrees_with_bits() {
            fn check<A: SubsetOf<B>, B: Effects>() -> bool {
                A::SET.is_subset_of(B::SET)
            }
            let mut listed = 0;
            $($( assert!(check::<$small, $big>()); listed += 1; )*)*
            // 3 effects: each is in neither, the smaller only, or both: 3^3 pairs.
            assert_eq!(listed, 27);
        }
    };
}
subsets! {
    Pure <= Pure Read Write ReadWrite Network ReadNetwork WriteNetwork ReadWriteNetwork;
    Read <= Read ReadWrite ReadNetwork ReadWriteNetwork;
    Write <= Write ReadWrite WriteNetwork ReadWriteNetwork;
    Network <= Network ReadNetwork WriteNetwork ReadWriteNetwork;
    ReadWrite <= ReadWrite ReadWriteNetwork;
    ReadNetwork <= ReadNetwork ReadWriteNetwork;
    WriteNetwork <= WriteNetwork ReadWriteNetwork;
    ReadWriteNetwork <= ReadWriteNetwork;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set<E: Effects>() -> EffectSet {
        E::SET
    }

    #[test]
    fn union_agrees_with_run_time_union() {
        assert_eq!(
            set::<<Read as Union<Write>>::Output>(),
            EffectSet::READ | EffectSet::WRITE
        );
        assert_eq!(set::<<Write as Union<Read>>::Output>(), set::<ReadWrite>());
        assert_eq!(
            set::<<Pure as Union<Network>>::Output>(),
            EffectSet::NETWORK
        );
        assert_eq!(
            set::<<ReadWrite as Union<WriteNetwork>>::Output>(),
            EffectSet::ALL
        );
    }

    #[test]
    fn display_and_parse_round_trip() {
        for bits in 0..8u8 {
            let s = EffectSet(bits);
            assert_eq!(s.to_string().parse::<EffectSet>(), Ok(s));
        }
        assert_eq!("Pure".parse::<EffectSet>(), Ok(EffectSet::PURE));
        assert!("Raed".parse::<EffectSet>().is_err());
    }

    #[test]
    fn subset_is_bitwise() {
        assert!(EffectSet::PURE.is_subset_of(EffectSet::PURE));
        assert!(EffectSet::READ.is_subset_of(EffectSet::ALL));
        assert!(!EffectSet::ALL.is_subset_of(EffectSet::READ));
        assert_eq!(
            (EffectSet::READ | EffectSet::WRITE).difference(EffectSet::READ),
            EffectSet::WRITE
        );
    }
}
