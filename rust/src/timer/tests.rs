//! The timing wheel's tests: firing at every level boundary, cancelling and rescheduling in
//! every position, and random operations against a model.

use super::*;
use crate::testing::Rng;
use std::collections::BTreeMap;

/// Advances to `now` and returns the payloads that fell due, in order.
fn fire(timer: &mut Timer<u64>, now: i64) -> Vec<u64> {
    timer.advance(now);
    std::iter::from_fn(|| timer.pop_due().map(|(_, _, v)| v)).collect()
}

/// The level boundaries of the wheel, in ms.
fn boundaries() -> Vec<i64> {
    (1..7).map(|l| 1i64 << (LEVEL_BITS * l)).collect()
}

#[test]
fn level_for_every_level_and_position() {
    for level in 0..NUM_LEVELS {
        for pos in [1u64, 2, 63] {
            let when = pos << (LEVEL_BITS * level as u32);
            assert_eq!(level_for(0, when), level, "level_for(0, {when:b})");
        }
    }
    assert_eq!(level_for(0, u64::MAX), NUM_LEVELS - 1);
    assert_eq!(level_for(63, 64), 1);
    assert_eq!(level_for(64, 65), 0);
}

#[test]
fn fires_exactly_at_expiration_at_every_boundary() {
    for b in boundaries() {
        for exp in [b - 1, b, b + 1] {
            let mut t = Timer::new(0);
            t.insert(exp, exp as u64);
            assert!(fire(&mut t, exp - 1).is_empty(), "fired early: exp={exp}");
            assert_eq!(fire(&mut t, exp), vec![exp as u64], "exp={exp}");
            assert!(t.is_empty());
        }
    }
}

#[test]
fn fires_at_every_boundary_when_stepping_one_ms() {
    let mut t = Timer::new(0);
    let mut exps: Vec<i64> = boundaries()
        .into_iter()
        .take(3)
        .flat_map(|b| [b - 1, b, b + 1])
        .collect();
    exps.sort();
    for &e in &exps {
        t.insert(e, e as u64);
    }
    let mut fired = Vec::new();
    for now in 1..=exps[exps.len() - 1] {
        for v in fire(&mut t, now) {
            assert_eq!(v as i64, now, "fired at the wrong time");
            fired.push(v as i64);
        }
    }
    assert_eq!(fired, exps);
}

#[test]
fn boundaries_seen_from_a_nonzero_start() {
    let start = 1_000_003;
    for b in boundaries() {
        for d in [b - 1, b, b + 1] {
            let mut t = Timer::new(start);
            t.insert(start + d, 1);
            assert!(fire(&mut t, start + d - 1).is_empty());
            assert_eq!(fire(&mut t, start + d), vec![1]);
        }
    }
}

#[test]
fn thirty_minute_delay_and_beyond_the_top_level() {
    let mut t = Timer::new(0);
    let thirty_min = 30 * 60 * 1000;
    t.insert(thirty_min, 1);
    t.insert(i64::MAX, 2);
    t.insert(1 << 40, 3);
    assert!(fire(&mut t, thirty_min - 1).is_empty());
    assert_eq!(fire(&mut t, thirty_min), vec![1]);
    assert!(fire(&mut t, (1 << 40) - 1).is_empty());
    assert_eq!(fire(&mut t, 1 << 40), vec![3]);
    assert!(fire(&mut t, i64::MAX - 1).is_empty());
    assert_eq!(fire(&mut t, i64::MAX), vec![2]);
}

#[test]
fn overdue_entries_fire_at_the_next_advance_in_expiration_order() {
    let mut t = Timer::new(100);
    t.insert(100, 3);
    t.insert(95, 1);
    t.insert(i64::MIN, 0);
    t.insert(99, 2);
    assert_eq!(t.next_expiration_ms(), Some(i64::MIN));
    assert_eq!(fire(&mut t, 0), vec![0, 1, 2, 3]);
    assert_eq!(t.now_ms(), 100, "the clock never moves back");
}

#[test]
fn cancel_in_every_position() {
    // head, middle and tail of a slot, at each level, and after a cascade.
    for b in [1i64, 64, 4096, 262_144] {
        for victim in 0..3u64 {
            let mut t = Timer::new(0);
            let keys: Vec<_> = (0..3u64).map(|v| t.insert(b + 5, v)).collect();
            assert_eq!(t.cancel(keys[victim as usize]), Some(victim));
            assert_eq!(
                t.cancel(keys[victim as usize]),
                None,
                "cancel is idempotent"
            );
            let mut expected: Vec<u64> = (0..3).filter(|&v| v != victim).collect();
            expected.sort();
            assert_eq!(fire(&mut t, b + 5), expected);
        }
    }
    let mut t = Timer::new(0);
    let k = t.insert(5000, 9);
    let other = t.insert(5000, 8);
    assert!(
        fire(&mut t, 4097).is_empty(),
        "5000 cascaded down from level 2"
    );
    assert_eq!(t.cancel(k), Some(9));
    assert_eq!(fire(&mut t, 5000), vec![8]);
    assert_eq!(t.cancel(other), None);
}

#[test]
fn cancel_a_due_entry_before_it_is_popped() {
    let mut t = Timer::new(0);
    let a = t.insert(10, 1);
    t.insert(10, 2);
    t.advance(10);
    assert_eq!(t.len(), 2);
    assert_eq!(t.cancel(a), Some(1));
    assert_eq!(t.len(), 1);
    assert_eq!(t.pop_due().map(|(_, _, v)| v), Some(2));
    assert!(t.pop_due().is_none());
}

#[test]
fn clock_jumps_fire_everything_due_in_order() {
    let mut t = Timer::new(0);
    let exps = [3i64, 70, 64, 5000, 4096, 1 << 30, 2, 300_000];
    for &e in &exps {
        t.insert(e, e as u64);
    }
    let mut sorted = exps.to_vec();
    sorted.sort();
    let fired: Vec<i64> = fire(&mut t, 1 << 31)
        .into_iter()
        .map(|v| v as i64)
        .collect();
    assert_eq!(fired, sorted);
    assert_eq!(t.next_expiration_ms(), None);
}

#[test]
fn reschedule_moves_the_entry_and_keeps_its_key() {
    let mut t = Timer::new(0);
    let k = t.insert(45_000, 7);
    assert_eq!(t.reschedule(k, 90_000), Some(k));
    assert!(fire(&mut t, 89_999).is_empty());
    assert_eq!(t.len(), 1);
    assert_eq!(fire(&mut t, 90_000), vec![7]);
    assert_eq!(t.reschedule(k, 1), None, "stale key");
}

#[test]
fn rescheduled_later_many_times_fires_once_at_the_last_expiration() {
    // The heartbeat cycle: a 45 s deadline pushed 3 s later, fifteen times, then left.
    let mut t = Timer::new(0);
    let k = t.insert(45_000, 1);
    let other = t.insert(50_000, 2);
    let mut now = 0;
    for _ in 0..15 {
        now += 3_000;
        assert!(fire(&mut t, now).is_empty());
        assert_eq!(t.reschedule(k, now + 45_000), Some(k));
    }
    let last = now + 45_000;
    let mut fired = Vec::new();
    while let Some(next) = t.next_expiration_ms() {
        assert!(next > now, "next expiration {next} not after now {now}");
        let earliest = if fired.is_empty() { 50_000 } else { last };
        assert!(
            next <= earliest,
            "next expiration {next} after the earliest, {earliest}"
        );
        now = next;
        fired.extend(fire(&mut t, now).into_iter().map(|v| (v, now)));
    }
    assert_eq!(fired, vec![(2, 50_000), (1, last)]);
    assert_eq!(t.cancel(other), None);
}

#[test]
fn rescheduled_earlier_moves_out_of_its_slot() {
    let mut t = Timer::new(0);
    let k = t.insert(300_000, 1);
    assert_eq!(t.reschedule(k, 70), Some(k));
    assert_eq!(
        t.next_expiration_ms(),
        Some(64),
        "level 1 slot of 70 starts at 64"
    );
    assert!(fire(&mut t, 69).is_empty());
    assert_eq!(fire(&mut t, 70), vec![1]);
}

#[test]
fn next_expiration_is_exact_at_level_zero_and_never_late() {
    let mut t: Timer<u64> = Timer::new(0);
    assert_eq!(t.next_expiration_ms(), None);
    t.insert(45_000, 1);
    let next = t.next_expiration_ms().unwrap();
    assert!(0 < next && next <= 45_000);
    t.advance(next);
    assert!(t.pop_due().is_none());
    let mut now = next;
    while let Some(n) = t.next_expiration_ms() {
        assert!(n > now && n <= 45_000);
        now = n;
        if t.advance(n) > 0 {
            break;
        }
    }
    assert_eq!(now, 45_000);
    assert_eq!(t.pop_due().map(|(_, e, v)| (e, v)), Some((45_000, 1)));
}

#[test]
fn entry_size_is_small() {
    // Printed for the README's memory-per-operation figure.
    println!(
        "timer entry bytes (u64 payload): {}",
        Timer::<u64>::entry_bytes()
    );
    assert!(Timer::<u64>::entry_bytes() <= 64);
}

#[test]
fn randomized_against_a_model() {
    for seed in 0..200u64 {
        let mut rng = Rng(seed);
        let start = rng.below(1 << 20) as i64 - (1 << 19);
        let mut t = Timer::new(start);
        let mut model: BTreeMap<u64, i64> = BTreeMap::new();
        let mut keys: Vec<(u64, TimerKey)> = Vec::new();
        let mut now = start;
        for id in 0..400u64 {
            match rng.below(10) {
                0..=4 => {
                    let delay = match rng.below(6) {
                        0 => rng.below(3) as i64 - 1,
                        1 => 1 << (LEVEL_BITS * (1 + rng.below(5) as u32)),
                        2 => rng.below(64) as i64,
                        3 => rng.below(5000) as i64,
                        4 => rng.below(3_000_000) as i64,
                        _ => rng.below(1 << 40) as i64,
                    };
                    let exp = now + delay;
                    keys.push((id, t.insert(exp, id)));
                    model.insert(id, exp);
                }
                5 | 6 if !keys.is_empty() => {
                    let (id, key) = keys.swap_remove(rng.below(keys.len() as u64) as usize);
                    assert_eq!(t.cancel(key), model.remove(&id).map(|_| id));
                }
                5 | 6 => {}
                7 if !keys.is_empty() => {
                    let i = rng.below(keys.len() as u64) as usize;
                    let (id, key) = keys[i];
                    let exp = now + rng.below(100_000) as i64;
                    if let Some(new_key) = t.reschedule(key, exp) {
                        keys[i].1 = new_key;
                        model.insert(id, exp);
                    }
                }
                7 => {}
                _ => {
                    let step = match rng.below(4) {
                        0 => 1,
                        1 => rng.below(100) as i64,
                        2 => rng.below(100_000) as i64,
                        _ => rng.below(1 << 36) as i64,
                    };
                    now += step;
                    t.advance(now);
                    let mut fired = Vec::new();
                    while let Some((_, exp, id)) = t.pop_due() {
                        assert!(exp <= now, "seed {seed}: fired early");
                        assert_eq!(
                            model.remove(&id),
                            Some(exp),
                            "seed {seed}: fired twice or unknown"
                        );
                        fired.push(exp);
                    }
                    assert!(
                        fired.windows(2).all(|w| w[0] <= w[1]),
                        "seed {seed}: out of order"
                    );
                    assert!(
                        model.values().all(|&e| e > now),
                        "seed {seed}: lost a due entry"
                    );
                    keys.retain(|(id, _)| model.contains_key(id));
                    assert_eq!(t.len(), model.len());
                    if let Some(next) = t.next_expiration_ms() {
                        assert!(
                            next <= *model.values().min().unwrap(),
                            "seed {seed}: next too late"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn lazy_cancellation_in_every_position_of_a_slot() {
    // Every subset of five placements sharing one slot, at each level: cancelled ones stay
    // in the slot as stale placements and must neither fire nor hide the live ones.
    for b in [5i64, 100, 5000, 300_000] {
        for mask in 0u32..32 {
            let mut t = Timer::new(0);
            let keys: Vec<_> = (0..5u64).map(|v| t.insert(b, v)).collect();
            for (v, &k) in keys.iter().enumerate() {
                if mask & (1 << v) != 0 {
                    assert_eq!(t.cancel(k), Some(v as u64));
                }
            }
            let live: Vec<u64> = (0..5).filter(|v| mask & (1 << v) == 0).collect();
            assert_eq!(t.len(), live.len());
            let next = t.next_expiration_ms();
            if live.is_empty() {
                assert_eq!(next, None, "a slot of stale placements is empty");
            } else {
                assert!(next.is_some_and(|n| n <= b), "mask {mask:05b}: {next:?}");
            }
            assert!(fire(&mut t, b - 1).is_empty());
            assert_eq!(fire(&mut t, b), live, "mask {mask:05b} at {b}");
            assert_eq!(t.placements, 0);
        }
    }
}

#[test]
fn next_expiration_skips_and_drops_a_slot_of_stale_placements() {
    let mut t = Timer::new(0);
    let stale: Vec<_> = (0..5).map(|_| t.insert(10, 0u64)).collect();
    t.insert(20, 1);
    stale.into_iter().for_each(|k| {
        t.cancel(k);
    });
    assert_eq!(t.next_expiration_ms(), Some(20));
    assert_eq!(
        t.placements, 1,
        "the stale slot at 10 was dropped on the way"
    );
}

#[test]
fn a_reused_entry_ignores_the_stale_placement_of_its_previous_life() {
    let mut t = Timer::new(0);
    let old = t.insert(10, 1);
    t.cancel(old);
    let new = t.insert(5000, 2);
    assert_eq!(new.index, old.index, "the slab reused the entry");
    assert!(
        fire(&mut t, 10).is_empty(),
        "the stale placement at 10 is not the new entry"
    );
    assert_eq!(t.next_expiration_ms().map(|n| n <= 5000), Some(true));
    assert_eq!(fire(&mut t, 5000), vec![2]);
}

#[test]
fn moved_earlier_and_back_fires_once() {
    let mut t = Timer::new(0);
    let k = t.insert(300_000, 7);
    assert_eq!(t.reschedule(k, 70), Some(k));
    assert_eq!(t.reschedule(k, 90_000), Some(k));
    assert_eq!(t.reschedule(k, 80), Some(k));
    assert!(fire(&mut t, 79).is_empty());
    assert_eq!(fire(&mut t, 80), vec![7]);
    assert!(
        fire(&mut t, 400_000).is_empty(),
        "its other placements are stale"
    );
    assert_eq!(t.placements, 0);
}

#[test]
fn stale_placements_stay_bounded_by_the_live_entries() {
    let mut t = Timer::new(0);
    let live: Vec<_> = (0..100).map(|i| t.insert(1_000_000 + i, 0u64)).collect();
    for round in 0..50 {
        let keys: Vec<_> = (0..1000)
            .map(|i| t.insert(500_000 + i * 7, round))
            .collect();
        for k in keys {
            t.cancel(k);
        }
        assert!(
            t.placements <= 2 * t.len() + COMPACTION_SLACK + 1,
            "round {round}: {} placements for {} entries",
            t.placements,
            t.len()
        );
    }
    assert_eq!(t.len(), live.len());
    assert_eq!(fire(&mut t, 2_000_000).len(), live.len());
}
