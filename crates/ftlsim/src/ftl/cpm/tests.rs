//! CPM and K-CPM: paper 004's worked examples, Eq. 2 by hand, K = 1 against CPM, K-InterGC.

use super::*;
