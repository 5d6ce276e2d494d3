//! How a call's question reaches its person, chosen once per call by [`choose`] from what the
//! client declared, the server's settings and the tool: the call's road, the road to the page
//! kept for a policy that allows the create only there, and, for a propose, the road its confirm
//! will take (the next step the agent is told). Every road ends in the same host decision
//! ([`super::rules`]); this only chooses the roads.
//!
//! The order, first match wins:
//!
//! 1. the tool may not ask (not in the `mutate` toolset): nobody is asked ([`Road::NotAsked`]);
//! 2. a retry on the stateless protocol (2026-07-28) follows its first round
//!    ([`Road::RoundTrip`]): a sealed state that names an approval page, with a page
//!    configured, looks for the decision there; any other carries the form's answer;
//! 3. a page is configured and the client declared URL elicitation: the link through URL-mode
//!    elicitation, and the call waits for the decision ([`Road::UrlElicitation`]; stateless, as a
//!    URL-mode input request, [`Round::FirstPage`]);
//! 4. the client declared form elicitation: the form, and the call waits ([`Road::Form`];
//!    stateless, as an input request, [`Round::FirstForm`]);
//! 5. a page is configured: its link in a plain result (`approval_pending`), and the same call
//!    made again collects the decision ([`Road::PageLink`]), on either protocol;
//! 6. the operator opted in to creates nobody confirmed ([`Road::OptIn`]);
//! 7. nobody can be asked ([`Road::Nobody`]: `unsupported_by_client`).
//!
//! A client is sent only what it declared it can show: a form to a client that declared forms, a
//! URL elicitation to one that declared URL mode, and otherwise a plain result. Where the
//! operator's policy allows a create only on the page, [`Road::page_instead`] names the road
//! to the page for a client that was to get the form; [`Roads::page_instead`] carries it with
//! the call, taken only if the policy refuses the call's own road.

/// What the client declared in its session (or, stateless, with its request).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Declared {
    /// It speaks the stateless protocol (2026-07-28): no server-to-client requests.
    pub stateless: bool,
    /// `elicitation.form` (or an `elicitation` capability with no modes, which means form).
    pub form: bool,
    /// `elicitation.url`.
    pub url: bool,
}

/// What the server offers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Offered {
    /// An approval page is configured.
    pub page: bool,
    /// `--allow-unconfirmed-mutations`.
    pub(crate) opt_in: bool,
}

/// What a stateless retry's sealed state says of its first round.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Sealed {
    /// No `requestState`: a first round.
    #[default]
    FirstRound,
    /// The first round showed the form; the retry carries the answer.
    Form,
    /// The first round sent the person to an approval page.
    Page,
}

/// The stateless protocol's rounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Round {
    /// The form goes out as an input request.
    FirstForm,
    /// The page's link goes out as a URL-mode input request.
    FirstPage,
    /// The retry carries the person's answer to the form.
    RetryForm,
    /// The retry finds the decision made on the page (or another input request with the link).
    RetryPage,
}

/// The road of one call's question.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Road {
    NotAsked,
    RoundTrip(Round),
    UrlElicitation,
    Form,
    /// The page's link in the client's form, and the call waits for the decision (a form client
    /// whose create the policy allows only on the page).
    PageByForm,
    PageLink,
    OptIn,
    Nobody,
}

/// What the front knows of the call itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Call {
    /// The tool may ask a person (it is in the `mutate` toolset).
    pub(crate) tool_asks: bool,
    /// The tool proposes: its result tells the agent how the confirm will go.
    pub proposes: bool,
    /// What a stateless retry's sealed state says of its first round.
    pub sealed: Sealed,
}

/// One call's roads, chosen together by [`choose`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Roads {
    /// How this call's question reaches its person.
    pub road: Road,
    /// The road to the approval page, for when the operator's policy allows the create only there
    /// ([`Road::page_instead`]).
    pub(crate) page_instead: Option<Road>,
    /// For a propose: how this client's confirm of what it proposes will reach a person.
    pub(crate) confirm_next: Option<Road>,
}

/// The roads of one call, as the module's documentation orders them. A propose's confirm is a
/// first round of a tool that asks: when that is this call's own road, it is not chosen again.
pub fn choose(declared: Declared, offered: Offered, call: Call) -> Roads {
    let own = road_of(declared, offered, call.tool_asks, call.sealed);
    let confirm_next = call.proposes.then(|| match (call.tool_asks, call.sealed) {
        (true, Sealed::FirstRound) => own,
        _ => road_of(declared, offered, true, Sealed::FirstRound),
    });
    Roads { road: own, page_instead: own.page_instead(offered), confirm_next }
}

/// The road of a call of a tool that may (`tool_asks`) or may not ask, as the module's
/// documentation orders them.
fn road_of(declared: Declared, offered: Offered, tool_asks: bool, sealed: Sealed) -> Road {
    if !tool_asks {
        return Road::NotAsked;
    }
    match sealed {
        Sealed::Page if offered.page => return Road::RoundTrip(Round::RetryPage),
        Sealed::Page | Sealed::Form => return Road::RoundTrip(Round::RetryForm),
        Sealed::FirstRound => {}
    }
    if offered.page && declared.url {
        return match declared.stateless {
            true => Road::RoundTrip(Round::FirstPage),
            false => Road::UrlElicitation,
        };
    }
    if declared.form {
        return match declared.stateless {
            true => Road::RoundTrip(Round::FirstForm),
            false => Road::Form,
        };
    }
    if offered.page {
        return Road::PageLink;
    }
    if offered.opt_in {
        return Road::OptIn;
    }
    Road::Nobody
}

impl Road {
    /// The road to the approval page for a call that was to get the form, when the operator's
    /// policy allows the create only there: the page's link in the client's own form (the call
    /// waits for the decision) or, stateless, in the first round's input request. A road that
    /// already leads to the page, or one with no form, has none.
    pub(crate) fn page_instead(self, offered: Offered) -> Option<Road> {
        match (self, offered.page) {
            (Road::Form, true) => Some(Road::PageByForm),
            (Road::RoundTrip(Round::FirstForm), true) => Some(Road::RoundTrip(Round::FirstPage)),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FORM: Declared = Declared { stateless: false, form: true, url: false };
    const URL: Declared = Declared { stateless: false, form: false, url: true };
    const BOTH: Declared = Declared { stateless: false, form: true, url: true };
    const NONE: Declared = Declared { stateless: false, form: false, url: false };
    const PAGE: Offered = Offered { page: true, opt_in: false };
    const BARE: Offered = Offered { page: false, opt_in: false };
    const OPT_IN: Offered = Offered { page: false, opt_in: true };

    fn pre(declared: Declared, offered: Offered) -> Road {
        road_of(declared, offered, true, Sealed::FirstRound)
    }

    #[test]
    fn a_tool_that_may_not_ask_asks_nobody_whatever_the_client() {
        for declared in [FORM, URL, BOTH, NONE, Declared { stateless: true, ..BOTH }] {
            for offered in [PAGE, BARE, OPT_IN] {
                assert_eq!(road_of(declared, offered, false, Sealed::Form), Road::NotAsked);
            }
        }
    }

    #[test]
    fn a_form_client_gets_the_form_unless_it_can_open_the_page() {
        assert_eq!(pre(FORM, BARE), Road::Form);
        assert_eq!(pre(FORM, PAGE), Road::Form, "a form client keeps its form beside a page");
        assert_eq!(pre(FORM, OPT_IN), Road::Form, "the opt-in never replaces a form");
        assert_eq!(pre(BOTH, PAGE), Road::UrlElicitation, "URL mode goes to the page");
        assert_eq!(pre(BOTH, BARE), Road::Form, "URL mode without a page: the form");
    }

    #[test]
    fn a_client_without_forms_gets_the_page_link_then_the_opt_in_then_nobody() {
        assert_eq!(pre(URL, PAGE), Road::UrlElicitation);
        assert_eq!(pre(NONE, PAGE), Road::PageLink);
        assert_eq!(pre(URL, BARE), Road::Nobody, "URL mode alone shows no form");
        assert_eq!(pre(NONE, BARE), Road::Nobody);
        assert_eq!(pre(NONE, OPT_IN), Road::OptIn);
        assert_eq!(pre(NONE, Offered { page: true, opt_in: true }), Road::PageLink, "a page before the opt-in");
    }

    #[test]
    fn a_stateless_client_gets_only_what_it_declared() {
        let stateless = |declared: Declared| Declared { stateless: true, ..declared };
        let round = |declared, offered, sealed| road_of(stateless(declared), offered, true, sealed);
        assert_eq!(round(FORM, PAGE, Sealed::FirstRound), Road::RoundTrip(Round::FirstForm));
        assert_eq!(round(FORM, BARE, Sealed::FirstRound), Road::RoundTrip(Round::FirstForm));
        assert_eq!(round(BOTH, PAGE, Sealed::FirstRound), Road::RoundTrip(Round::FirstPage));
        assert_eq!(round(URL, PAGE, Sealed::FirstRound), Road::RoundTrip(Round::FirstPage));
        // no form for a client that declared none: the link as a plain result, or nobody
        assert_eq!(round(NONE, PAGE, Sealed::FirstRound), Road::PageLink);
        assert_eq!(round(NONE, BARE, Sealed::FirstRound), Road::Nobody);
        assert_eq!(round(URL, BARE, Sealed::FirstRound), Road::Nobody, "URL mode alone shows no form");
        assert_eq!(round(NONE, OPT_IN, Sealed::FirstRound), Road::OptIn);
        assert_eq!(round(FORM, BARE, Sealed::Form), Road::RoundTrip(Round::RetryForm));
        assert_eq!(round(FORM, PAGE, Sealed::Form), Road::RoundTrip(Round::RetryForm));
        // a retry follows where its first round sent the person, whatever it declares now
        assert_eq!(round(FORM, PAGE, Sealed::Page), Road::RoundTrip(Round::RetryPage));
        assert_eq!(round(NONE, PAGE, Sealed::Page), Road::RoundTrip(Round::RetryPage));
        assert_eq!(round(URL, BARE, Sealed::Page), Road::RoundTrip(Round::RetryForm), "no page to look on");
    }

    #[test]
    fn where_the_policy_wants_the_page_a_form_client_is_sent_there() {
        let first_form = Road::RoundTrip(Round::FirstForm);
        assert_eq!(Road::Form.page_instead(PAGE), Some(Road::PageByForm));
        assert_eq!(first_form.page_instead(PAGE), Some(Road::RoundTrip(Round::FirstPage)));
        assert_eq!(Road::Form.page_instead(BARE), None, "no page to send anyone to");
        for already in [Road::UrlElicitation, Road::PageLink, Road::RoundTrip(Round::FirstPage)] {
            assert_eq!(already.page_instead(PAGE), None, "{already:?} is the page already");
        }
        for formless in [Road::OptIn, Road::Nobody, Road::NotAsked] {
            assert_eq!(formless.page_instead(PAGE), None, "{formless:?}");
        }
        // a retry's answer was given already: it is judged, never rerouted
        assert_eq!(Road::RoundTrip(Round::RetryForm).page_instead(PAGE), None);
    }

    const PROPOSE: Call = Call { tool_asks: true, proposes: true, sealed: Sealed::FirstRound };
    const CONFIRM: Call = Call { tool_asks: true, proposes: false, sealed: Sealed::FirstRound };
    const READ: Call = Call { tool_asks: false, proposes: false, sealed: Sealed::FirstRound };

    #[test]
    fn the_roads_are_chosen_together_and_a_propose_names_its_confirms() {
        let stateless = |declared: Declared| Declared { stateless: true, ..declared };
        for declared in [FORM, URL, BOTH, NONE, stateless(FORM), stateless(URL), stateless(NONE)] {
            for offered in [PAGE, BARE, OPT_IN, Offered { page: true, opt_in: true }] {
                let said = format!("{declared:?} {offered:?}");
                let confirm = choose(declared, offered, CONFIRM);
                assert_eq!(confirm.road, road_of(declared, offered, true, Sealed::FirstRound), "{said}");
                assert_eq!(confirm.page_instead, confirm.road.page_instead(offered), "{said}");
                assert_eq!(confirm.confirm_next, None, "{said}: only a propose names a next step");
                // a propose's next step is the road its confirm then takes, on the same client
                let propose = choose(declared, offered, PROPOSE);
                assert_eq!(propose.confirm_next, Some(confirm.road), "{said}");
                let read = choose(declared, offered, READ);
                assert_eq!((read.road, read.page_instead, read.confirm_next), (Road::NotAsked, None, None));
            }
        }
        // a propose of a tool that may not ask still tells the agent how its confirm will go
        let unasked = choose(FORM, PAGE, Call { tool_asks: false, ..PROPOSE });
        assert_eq!((unasked.road, unasked.confirm_next), (Road::NotAsked, Some(Road::Form)));
        // a retry's own road is its round's; its confirm would be a first round
        let retry = choose(stateless(FORM), PAGE, Call { sealed: Sealed::Form, ..PROPOSE });
        assert_eq!(retry.road, Road::RoundTrip(Round::RetryForm));
        assert_eq!(retry.confirm_next, Some(Road::RoundTrip(Round::FirstForm)));
        assert_eq!(retry.page_instead, None, "an answer given already is judged, never rerouted");
    }
}
