//! Unit tests of the bisect machine's internals: the posterior and the decision rules.

use super::*;
