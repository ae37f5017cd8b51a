//! Preset sessions lent to the worker threads of one pass and kept for the
//! next: the checking pass's instances serve the run pass when it uses the
//! batches the checking pass kept (nothing is translated twice by one
//! instance), so a small run makes each worker's preset instance once, not
//! once per pass (its start-up is mostly making instances).

use std::ops::{Deref, DerefMut};
use std::sync::{Arc, Mutex};

use crate::eval::EvalError;
use crate::eval::options::preset_limits;
use crate::plugin::Plugin;
use crate::plugin::preset::PresetSession;

/// Idle sessions of one preset.
pub struct PresetSessions {
    preset: Arc<Plugin>,
    idle: Mutex<Vec<PresetSession>>,
}

impl PresetSessions {
    pub fn new(preset: Arc<Plugin>) -> Self {
        Self {
            preset,
            idle: Mutex::new(Vec::new()),
        }
    }

    /// An idle session, or a new one; it comes back when the loan drops.
    pub fn lend(&self) -> Result<Lent<'_>, EvalError> {
        let idle = self.idle.lock().unwrap_or_else(|p| p.into_inner()).pop();
        let session = match idle {
            Some(session) => session,
            None => PresetSession::new(self.preset.clone(), preset_limits())?,
        };
        Ok(Lent {
            session: Some(session),
            home: self,
        })
    }

    /// Drops idle sessions beyond the first `count` (their instances' memory
    /// with them).
    pub fn keep_at_most(&self, count: usize) {
        self.idle
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .truncate(count);
    }
}

/// A session on loan to one worker.
pub struct Lent<'a> {
    session: Option<PresetSession>,
    home: &'a PresetSessions,
}

impl Deref for Lent<'_> {
    type Target = PresetSession;

    fn deref(&self) -> &PresetSession {
        self.session.as_ref().expect("held until dropped")
    }
}

impl DerefMut for Lent<'_> {
    fn deref_mut(&mut self) -> &mut PresetSession {
        self.session.as_mut().expect("held until dropped")
    }
}

/// Back to the idle ones, unless its worker is unwinding (a store in an
/// unknown state is not lent again). A session whose call trapped has
/// already dropped its instance and makes a new one when next used.
impl Drop for Lent<'_> {
    fn drop(&mut self) {
        if let Some(session) = self.session.take()
            && !std::thread::panicking()
        {
            self.home
                .idle
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(session);
        }
    }
}
