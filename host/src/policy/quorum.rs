//! How many people must approve a request, and from which groups: the `@approvals("...")`
//! annotation of a policy, read and counted here (pure: no Cedar, no store).
//!
//! The annotation's text is one or more alternatives joined by `or`, each a sum of terms joined
//! by `and`, each term a number from 1 to 9, optionally `of GROUP`: `2 of netops or 1 of netops
//! and 1 of finance`. A term without a group counts anyone the set lets approve. An alternative
//! is met when distinct people can be given each of its places, every one in a place of a group
//! they belong to (one person fills one place, whatever groups they are in); a quorum is met when
//! one of its alternatives is. The proposer never counts: the caller leaves them out.

use std::collections::BTreeMap;

/// The most places one alternative may have: more people than any change review asks for, and
/// few enough that counting them is instant.
pub(crate) const MAX_PLACES: u32 = 9;

/// One `@approvals` annotation, read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Quorum {
    /// Each alternative's places: the group a place asks for, or `None` for anyone.
    alternatives: Vec<Vec<Option<String>>>,
}

/// One person's approval, as the quorum counts it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Voter<'a> {
    pub person: &'a str,
    pub groups: &'a [String],
}

fn number(word: &str) -> Option<u32> {
    let words = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine"];
    word.parse::<u32>().ok().or_else(|| words.iter().position(|w| *w == word).map(|i| i as u32 + 1))
}

fn is_group(name: &str) -> bool {
    (1..=128).contains(&name.len()) && !name.chars().any(|c| c.is_whitespace() || c.is_control() || c == '"')
}

/// What is wrong with a quorum's text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum NotAQuorum {
    #[error(
        "{0:?} is no term of a quorum: write a number from 1 to 9, optionally `of GROUP` (\"2 of netops or 1 of \
         netops and 1 of finance\")"
    )]
    Term(String),
    #[error("{0:?} is no group name")]
    Group(String),
    #[error("{alternative:?} asks for {places} approvals; a quorum asks for at most {MAX_PLACES}")]
    TooMany { alternative: String, places: usize },
}

impl Quorum {
    /// Reads an annotation's text; `Err` says what is wrong with it.
    pub(crate) fn parse(text: &str) -> Result<Quorum, NotAQuorum> {
        let mut alternatives = Vec::new();
        for alternative in text.split(" or ") {
            let mut places = Vec::new();
            for term in alternative.split(" and ") {
                let words: Vec<&str> = term.split_whitespace().collect();
                let (count, group) = match words.as_slice() {
                    [n] => (number(n), None),
                    [n, "of", group] => (number(n), Some(group.to_string())),
                    _ => (None, None),
                };
                let Some(count) = count.filter(|n| (1..=MAX_PLACES).contains(n)) else {
                    return Err(NotAQuorum::Term(term.to_string()));
                };
                if let Some(group) = group.as_deref().filter(|g| !is_group(g)) {
                    return Err(NotAQuorum::Group(group.to_string()));
                }
                places.extend(std::iter::repeat_n(group, count as usize));
            }
            if places.len() > MAX_PLACES as usize {
                return Err(NotAQuorum::TooMany { alternative: alternative.trim().to_string(), places: places.len() });
            }
            alternatives.push(places);
        }
        Ok(Quorum { alternatives })
    }

    /// The groups its places name.
    pub(crate) fn groups(&self) -> impl Iterator<Item = &str> {
        self.alternatives.iter().flatten().flatten().map(String::as_str)
    }

    /// Whether `voters` (distinct people, the proposer left out) meet it.
    pub(crate) fn met_by(&self, voters: &[Voter]) -> bool {
        self.alternatives.iter().any(|places| filled(places, voters).iter().all(Option::is_some))
    }

    /// Whether `voter`'s approval would fill a place that `voters` leave open, in some
    /// alternative: an approval that would not is not counted.
    pub(crate) fn counts(&self, voters: &[Voter], voter: Voter) -> bool {
        let mut with = voters.to_vec();
        with.push(voter);
        self.alternatives.iter().any(|places| count(&filled(places, &with)) > count(&filled(places, voters)))
    }

    /// Whether `voter` belongs in any place of any alternative (whose decline ends a request).
    pub(crate) fn concerns(&self, voter: Voter) -> bool {
        self.alternatives.iter().flatten().any(|place| fits(place, voter))
    }

    /// The alternative nearest to being met by `voters`: how many of its places they fill, and
    /// the places still open, in words ("1 more of netops and 1 of finance").
    pub(crate) fn nearest(&self, voters: &[Voter]) -> (usize, usize, String) {
        let mut best: Option<(usize, usize, String)> = None;
        for places in &self.alternatives {
            let given = filled(places, voters);
            let open = given.iter().filter(|g| g.is_none()).count();
            if best.as_ref().is_none_or(|(_, o, _)| open < *o) {
                let words = match open {
                    // one place left: every group whose member would fill it, whichever place the
                    // matching happened to leave open (someone in two groups may move)
                    1 => one_of(places, voters).unwrap_or_else(|| open_places(places, &given)),
                    _ => open_places(places, &given),
                };
                best = Some((count(&given), open, words));
            }
        }
        best.unwrap_or_default()
    }
}

/// What a request needs at one moment: the quorum of every `@approvals` policy that holds for
/// it, each to be met (by the same people or others). Empty: one approval decides, as without.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Requirement {
    /// The policy's id, and its quorum.
    pub rules: Vec<(String, Quorum)>,
    /// The rules among them that are `@break_glass` forbids: a freeze only their quorum opens.
    pub break_glass: Vec<String>,
}

/// How far a request's approvals have come.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Progress {
    /// Approvals counted so far.
    pub approvals: usize,
    /// The fewest approvals in all that could make it whole, by the alternatives nearest to being
    /// met (someone in several groups may fill a place in each rule, so it may grow as others
    /// approve).
    pub needed: usize,
    /// The places still open, in words ("1 more of netops"); empty once met.
    pub missing: String,
    /// The quorums it needs, as the policies write them (`"large-changes": 2 of netops`).
    pub needs: Vec<String>,
    /// The break-glass rules it is approved under (a freeze only their quorum opens).
    #[serde(default)]
    pub break_glass: Vec<String>,
}

impl Requirement {
    pub(crate) fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// Every rule's quorum, met by `voters`.
    pub(crate) fn met_by(&self, voters: &[Voter]) -> bool {
        self.rules.iter().all(|(_, q)| q.met_by(voters))
    }

    /// Whether `voter`'s approval fills a place some rule not yet met leaves open.
    pub(crate) fn counts(&self, voters: &[Voter], voter: Voter) -> bool {
        self.rules.iter().any(|(_, q)| !q.met_by(voters) && q.counts(voters, voter))
    }

    /// Whether `voter` belongs in some place of some rule (whose decline ends the request).
    pub(crate) fn concerns(&self, voter: Voter) -> bool {
        self.rules.iter().any(|(_, q)| q.concerns(voter))
    }

    /// The quorums, as the policies write them; a break-glass one says so.
    pub(crate) fn needs(&self) -> Vec<String> {
        self.rules
            .iter()
            .map(|(id, q)| match self.break_glass.contains(id) {
                true => format!("{id:?} (break-glass): {q}"),
                false => format!("{id:?}: {q}"),
            })
            .collect()
    }

    /// Whether a break-glass rule holds: the request is inside a freeze its quorum may open.
    pub(crate) fn is_break_glass(&self) -> bool {
        !self.break_glass.is_empty()
    }

    /// How far `voters` (each counted when they approved) have brought it.
    pub(crate) fn progress(&self, voters: &[Voter]) -> Progress {
        let open: Vec<(&String, usize, String)> = self
            .rules
            .iter()
            .filter(|(_, q)| !q.met_by(voters))
            .map(|(id, q)| {
                let (_, open, words) = q.nearest(voters);
                (id, open, words)
            })
            .collect();
        let missing = match open.as_slice() {
            [(_, _, words)] => words.clone(),
            many => many.iter().map(|(id, _, words)| format!("{words} (for {id:?})")).collect::<Vec<_>>().join("; "),
        };
        Progress {
            approvals: voters.len(),
            needed: voters.len() + open.iter().map(|(_, n, _)| *n).max().unwrap_or(0),
            missing,
            needs: self.needs(),
            break_glass: self.break_glass.clone(),
        }
    }
}

impl Progress {
    /// "1 of 2 approvals; waiting for 1 more of netops".
    pub(crate) fn said(&self) -> String {
        let of = format!("{} of {} approvals", self.approvals, self.needed);
        match self.missing.is_empty() {
            true => of,
            false => format!("{of}; waiting for {}", self.missing),
        }
    }
}

impl std::fmt::Display for Quorum {
    /// The quorum as a person reads it: `2 of netops or 1 of netops and 1 of finance`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let alternatives: Vec<String> = self
            .alternatives
            .iter()
            .map(|places| {
                let mut counted: Vec<(Option<&String>, usize)> = Vec::new();
                for place in places {
                    match counted.iter_mut().find(|(g, _)| *g == place.as_ref()) {
                        Some((_, n)) => *n += 1,
                        None => counted.push((place.as_ref(), 1)),
                    }
                }
                let terms: Vec<String> = counted
                    .iter()
                    .map(|(group, n)| match group {
                        Some(g) => format!("{n} of {g}"),
                        None => format!("{n}"),
                    })
                    .collect();
                terms.join(" and ")
            })
            .collect();
        f.write_str(&alternatives.join(" or "))
    }
}

fn fits(place: &Option<String>, voter: Voter) -> bool {
    place.as_ref().is_none_or(|g| voter.groups.contains(g))
}

fn count(given: &[Option<usize>]) -> usize {
    given.iter().filter(|g| g.is_some()).count()
}

/// A largest assignment of distinct `voters` to `places` (each place: the voter given it), by
/// augmenting paths: a voter takes a free place they fit, or one whose holder can move.
fn filled(places: &[Option<String>], voters: &[Voter]) -> Vec<Option<usize>> {
    fn place_for(
        v: usize,
        places: &[Option<String>],
        voters: &[Voter],
        given: &mut [Option<usize>],
        seen: &mut [bool],
    ) -> bool {
        for p in 0..places.len() {
            if seen[p] || !fits(&places[p], voters[v]) {
                continue;
            }
            seen[p] = true;
            if given[p].is_none_or(|holder| place_for(holder, places, voters, given, seen)) {
                given[p] = Some(v);
                return true;
            }
        }
        false
    }
    let mut given = vec![None; places.len()];
    for v in 0..voters.len() {
        let mut seen = vec![false; places.len()];
        place_for(v, places, voters, &mut given, &mut seen);
    }
    given
}

/// With one place of `places` left open by `voters`, the groups a member of which would fill it,
/// in words ("1 of netops or finance"), when there are several and no place takes anyone.
fn one_of(places: &[Option<String>], voters: &[Voter]) -> Option<String> {
    let before = count(&filled(places, voters));
    let mut groups: Vec<&String> = Vec::new();
    for place in places {
        let group = place.as_ref()?;
        let member = [group.clone()];
        let with: Vec<Voter> = voters.iter().copied().chain([Voter { person: "", groups: &member }]).collect();
        if !groups.contains(&group) && count(&filled(places, &with)) > before {
            groups.push(group);
        }
    }
    (groups.len() > 1).then(|| format!("1 of {}", groups.iter().map(|g| g.as_str()).collect::<Vec<_>>().join(" or ")))
}

/// The places `given` leaves open, in words, grouped: "1 more of netops and 1 of finance".
fn open_places(places: &[Option<String>], given: &[Option<usize>]) -> String {
    let mut by_group: BTreeMap<Option<&str>, (usize, usize)> = BTreeMap::new();
    for (place, holder) in places.iter().zip(given) {
        let (open, held) = by_group.entry(place.as_deref()).or_default();
        if holder.is_some() { *held += 1 } else { *open += 1 }
    }
    let words: Vec<String> = by_group
        .into_iter()
        .filter(|(_, (open, _))| *open > 0)
        .map(|(group, (open, held))| {
            let more = if held > 0 { " more" } else { "" };
            match group {
                Some(g) => format!("{open}{more} of {g}"),
                None => format!("{open}{more} of anyone who may approve"),
            }
        })
        .collect();
    words.join(" and ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn people(list: &[(&'static str, &[&str])]) -> Vec<(String, Vec<String>)> {
        list.iter().map(|(p, g)| (p.to_string(), g.iter().map(|s| s.to_string()).collect())).collect()
    }

    fn voters(list: &[(String, Vec<String>)]) -> Vec<Voter<'_>> {
        list.iter().map(|(person, groups)| Voter { person, groups }).collect()
    }

    #[test]
    fn a_quorum_reads_as_written_and_refuses_what_it_cannot_read() {
        let q = Quorum::parse("2 of netops or 1 of netops and one of finance").unwrap();
        assert_eq!(q.to_string(), "2 of netops or 1 of netops and 1 of finance");
        assert_eq!(q.groups().collect::<Vec<_>>(), ["netops", "netops", "netops", "finance"]);
        assert_eq!(Quorum::parse("2").unwrap().to_string(), "2");
        let term = |t: &str| NotAQuorum::Term(t.into());
        for (bad, is, says) in [
            ("0 of netops", term("0 of netops"), "no term"),
            ("10", term("10"), "no term"),
            ("two people of netops", term("two people of netops"), "no term"),
            ("", term(""), "no term"),
            (
                "5 of a and 5 of b",
                NotAQuorum::TooMany { alternative: "5 of a and 5 of b".into(), places: 10 },
                "at most 9",
            ),
            ("1 of \"x\"", NotAQuorum::Group("\"x\"".into()), "no group name"),
        ] {
            let e = Quorum::parse(bad).unwrap_err();
            assert_eq!(e, is, "{bad:?}");
            assert!(e.to_string().contains(says), "{bad:?}: {e}");
        }
    }

    #[test]
    fn distinct_people_fill_the_places_of_their_groups() {
        let q = Quorum::parse("2 of netops or 1 of netops and 1 of finance").unwrap();
        let all = people(&[
            ("alice", &["netops"]),
            ("bob", &["netops"]),
            ("carol", &["finance"]),
            ("dan", &["netops", "finance"]),
        ]);
        let v = voters(&all);
        let (alice, bob, carol, dan) = (v[0], v[1], v[2], v[3]);
        assert!(!q.met_by(&[]));
        assert!(!q.met_by(&[alice]), "one person is one place");
        assert!(q.met_by(&[alice, bob]));
        assert!(q.met_by(&[alice, carol]));
        assert!(!q.met_by(&[carol]), "finance alone is not netops");
        assert!(q.met_by(&[carol, dan]), "dan is netops to carol's finance");
        assert_eq!(q.nearest(&[alice]), (1, 1, "1 more of netops".into()));
        assert_eq!(q.nearest(&[carol]), (1, 1, "1 of netops".into()));
        assert_eq!(q.nearest(&[]), (0, 2, "2 of netops".into()));
        let two_groups = Quorum::parse("1 of netops and 1 of finance").unwrap();
        assert!(two_groups.counts(&[alice], carol));
        assert!(!two_groups.counts(&[alice], bob), "a second netops fills no open place");
        assert!(two_groups.concerns(bob) && !two_groups.concerns(Voter { person: "x", groups: &[] }));
        // dan fits both places: with alice he must take finance's, and the matching finds it
        assert!(two_groups.met_by(&[dan, alice]));
        assert_eq!(two_groups.nearest(&[alice]), (1, 1, "1 of finance".into()));
        // dan may take either place: either group's member would complete it, and it says so
        assert_eq!(two_groups.nearest(&[dan]), (1, 1, "1 of netops or finance".into()));
        assert!(two_groups.counts(&[dan], alice) && two_groups.counts(&[dan], carol));
        let anyone = Quorum::parse("2").unwrap();
        assert!(anyone.counts(&[carol], alice) && anyone.concerns(Voter { person: "x", groups: &[] }));
        assert_eq!(anyone.nearest(&[carol]).2, "1 more of anyone who may approve");
    }

    /// Every subset of five people against quorums of up to three places: met exactly when some
    /// alternative has an assignment, found by trying every one.
    #[test]
    fn the_matching_finds_an_assignment_whenever_there_is_one() {
        let all = people(&[("a", &["x"]), ("b", &["y"]), ("c", &["x", "y"]), ("d", &[]), ("e", &["y", "z"])]);
        let v = voters(&all);
        for text in
            ["2 of x", "1 of x and 1 of y", "1 of x and 2 of y", "1 of z and 1 of x and 1", "3", "2 of y or 2 of x"]
        {
            let q = Quorum::parse(text).unwrap();
            for mask in 0..32u32 {
                let chosen: Vec<Voter> = (0..5).filter(|i| mask & (1 << i) != 0).map(|i| v[i]).collect();
                let brute =
                    q.alternatives.iter().any(|places| assignable(places, &chosen, &mut vec![false; chosen.len()]));
                assert_eq!(
                    q.met_by(&chosen),
                    brute,
                    "{text} by {:?}",
                    chosen.iter().map(|c| c.person).collect::<Vec<_>>()
                );
            }
        }
    }

    fn assignable(places: &[Option<String>], voters: &[Voter], used: &mut Vec<bool>) -> bool {
        let Some((place, rest)) = places.split_first() else { return true };
        (0..voters.len()).any(|i| {
            if used[i] || !fits(place, voters[i]) {
                return false;
            }
            used[i] = true;
            let ok = assignable(rest, voters, used);
            used[i] = false;
            ok
        })
    }
}
