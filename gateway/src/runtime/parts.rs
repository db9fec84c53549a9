//! What the floors above the runtime keep for the whole process (the agent's tools and
//! model counters, sub-agents' announces, the MCP servers, the cluster's bus): one value
//! per type, put in by `app` as it wires them, and made from `Default` on first use when
//! `app` had nothing to say (a unit test's runtime). The runtime holds them without
//! naming them, so it never imports a floor above it.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::RwLock;

type Slot = Arc<dyn Any + Send + Sync>;

/// The upper floors' shared values, by type.
#[derive(Default)]
pub struct Parts {
    slots: RwLock<HashMap<TypeId, Slot>>,
}

impl Parts {
    /// Parts holding `value` (and nothing else yet).
    pub fn with<T: Any + Send + Sync>(self, value: T) -> Self {
        self.slots
            .write()
            .insert(TypeId::of::<T>(), Arc::new(value));
        self
    }

    /// Parts holding `value`, shared with whoever else holds it.
    pub fn with_shared<T: Any + Send + Sync>(self, value: Arc<T>) -> Self {
        self.slots.write().insert(TypeId::of::<T>(), value);
        self
    }

    /// The `T` of this process: the one `app` put in, or a default one made now (and kept).
    pub fn get<T: Any + Send + Sync + Default>(&self) -> Arc<T> {
        if let Some(found) = self.find::<T>() {
            return found;
        }
        let mut slots = self.slots.write();
        let slot = slots
            .entry(TypeId::of::<T>())
            .or_insert_with(|| Arc::new(T::default()) as Slot);
        match Arc::clone(slot).downcast::<T>() {
            Ok(value) => value,
            // Unreachable: a slot is keyed by its value's own type.
            Err(_) => Arc::new(T::default()),
        }
    }

    fn find<T: Any + Send + Sync>(&self) -> Option<Arc<T>> {
        let slot = Arc::clone(self.slots.read().get(&TypeId::of::<T>())?);
        slot.downcast::<T>().ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    #[derive(Default)]
    struct Counter(AtomicU32);

    #[derive(Default, Debug, PartialEq)]
    struct Named(&'static str);

    /// Catches: a part made twice (two callers seeing different counters), or a part put
    /// in by `app` replaced by a default one.
    #[test]
    fn a_part_is_made_once_and_one_put_in_is_kept() {
        let parts = Parts::default().with(Named("wired"));
        parts.get::<Counter>().0.fetch_add(1, Ordering::Relaxed);
        parts.get::<Counter>().0.fetch_add(1, Ordering::Relaxed);
        assert_eq!(parts.get::<Counter>().0.load(Ordering::Relaxed), 2);
        assert_eq!(*parts.get::<Named>(), Named("wired"));
    }
}
