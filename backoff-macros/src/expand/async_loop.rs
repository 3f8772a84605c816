//! The async loop.
//!
//! The body in a non-`move` async block per attempt, the
//! decision after each, and the sleep, all in the function.
use super::*;

/// The locals the async loop binds.
struct AsyncLocals {
    /// The loop's state.
    state: Ident,
    /// An attempt's result.
    result: Ident,
    /// Whether a retried call below gave up.
    below: Ident,
    /// The wait before the next attempt.
    wait: Ident,
    /// The timer (`sleep = ...`, or the default).
    timer: Ident,
}

impl Generator<'_> {
    /// The async loop: the body in a non-`move` async block per attempt, the
    /// decision after each, and the sleep; it stays in the function.
    pub(super) fn async_loop(&self, body: TokenStream) -> TokenStream {
        let full = self.full;
        // Neither the attempt's result nor the wait is used after the
        // sleep's `.await`: neither takes room in the future.
        let names = AsyncLocals {
            state: local("loop"),
            result: local_at("result", self.return_span),
            below: local("below"),
            wait: local("wait"),
            timer: local("timer"),
        };
        // The block is on the attribute: when the body moves what the next
        // attempt needs (a field included: `opts.mode`, `let S { a, b } =
        // self`), rustc's E0382 says "value moved here, in previous
        // iteration of loop" on the `#[retry]` line, not on the body's `}`.
        let attempt = quote_spanned!(Span::call_site()=> async { #body });
        let (timeout_check, attempt) = self.timed(attempt, &names.state);
        let timer_clock = self.timer_clock(&names.timer);
        // With `budget`, the retry the budget allowed is held as a charge
        // across the wait: sent with the attempt, given back when the
        // future is dropped before that, or the attempt refused. Without
        // `admission` the charge lives in the wait's scope alone (the
        // attempt follows the wait at once); with it, across the
        // admission's wait too, in a local of the loop.
        let charge = local("charge");
        let charge = match (&self.args.budget, &self.args.admission) {
            (None, _) => None,
            (Some(_), None) => Some(Charge::OfTheWait(charge)),
            (Some(_), Some(_)) => Some(Charge::OfTheLoop(charge)),
        };
        let attempt = match charge.as_ref().and_then(Charge::of_the_loop) {
            Some(charge) => quote!({
                #full::Charged::sent_if_held(#charge.take());
                #attempt
            }),
            None => attempt,
        };
        let (admission_check, admitting_value, attempt) =
            self.admitted_async(timer_clock.clone(), &names.timer, attempt);
        let after = self.after_async_attempt(&names, charge.as_ref());
        let AsyncLocals {
            state,
            result,
            below,
            timer,
            ..
        } = &names;
        let looped = self.looped(
            (state, self.loop_start(timer_clock)),
            [admitting_value, self.attempts_value(state).unwrap_or_default()],
            (result, below, attempt),
            after,
        );
        let timer_check = self.default_timer_check();
        let timer_value = self.timer_value();
        let charge_value = charge
            .as_ref()
            .and_then(Charge::of_the_loop)
            .map(|charge| quote!(let mut #charge = #full::None;));
        quote! {
            #timeout_check
            #admission_check
            #timer_check
            let mut #timer = #timer_value;
            #charge_value
            #looped
        }
    }

    /// With `timeout = ...`: the checks that the error type absorbs
    /// `Elapsed` and that a timer exists, and `attempt` under the time
    /// limit. Without it: `attempt` alone.
    fn timed(&self, attempt: TokenStream, state: &Ident) -> (Option<TokenStream>, TokenStream) {
        let Some(limit) = &self.args.timeout else {
            return (None, attempt);
        };
        let full = self.full;
        // Spanned on the `timeout` key: an error about the timed-out
        // attempt (no `E: From<Elapsed>`) points there.
        // The check (a type position) and the call carry exactly the
        // same span: rustc reports the check's error alone.
        let exact = Span::mixed_site().located_at(limit.key_span);
        let timeout_check = self.timeout_check(exact);
        let timed_out = respan_exactly(quote!(#full::timed_out_result()), exact);
        let with_timeout = respan(quote!(#full::with_timeout::<_, _>), limit.key_span);
        let limit = duration_tokens(limit.value);
        let policy = self.policy_outside();
        let attempt = quote!(#with_timeout(#state.attempt_timeout(#policy, #limit), #attempt, #timed_out));
        (timeout_check, attempt)
    }

    /// With `timeout = ...`, spanned `exact`ly on the key: the check that
    /// the error type absorbs `Elapsed` (unless the return type is
    /// inferred), and without a default timer the check whose error says
    /// so.
    fn timeout_check(&self, exact: Span) -> Option<TokenStream> {
        let krate = self.args.runtime_crate();
        let return_type = &self.return_type.erased;
        let check = respan_exactly(
            quote! {
                let _ = <<#return_type as #krate::bounds::RetryResult>::Err as #krate::bounds::FromElapsed>::from_elapsed;
            },
            exact,
        );
        // Without a default timer, the missing feature is this check's
        // error, on the key, in the words of a public bound.
        let timer_needed = (!HAS_DEFAULT_TIMER).then(|| {
            let checked = if self.return_type.infers {
                quote!(())
            } else {
                return_type.clone()
            };
            respan_exactly(
                quote! {
                    if false {
                        <#checked as #krate::bounds::TimeoutSupport>::has_default_timer();
                    }
                },
                exact,
            )
        });
        if !self.return_type.infers {
            Some(quote!(#check #timer_needed))
        } else {
            timer_needed
        }
    }

    /// The timer: `sleep = ...`, checked, or the default.
    fn timer_value(&self) -> TokenStream {
        let full = self.full;
        match self.args.sleep.as_ref().map(|sleep| &sleep.value) {
            Some(custom) => sleep_checked(custom, &self.args.runtime_crate(), true),
            None => quote!(#full::DefaultTimer::new()),
        }
    }

    /// Without `sleep = ...` the loop sleeps on the default timer: a build
    /// without one is this check's error, in the user's words (left out
    /// when the runtime's `tokio` or `futures-timer` feature is on, which
    /// turns on this crate's `default-timer`).
    fn default_timer_check(&self) -> Option<TokenStream> {
        let krate = self.args.runtime_crate();
        (self.args.sleep.is_none() && !HAS_DEFAULT_TIMER).then(|| {
            let return_type = if self.return_type.infers {
                quote!(())
            } else {
                self.return_type.erased.clone()
            };
            quote! {
                if false {
                    <#return_type as #krate::bounds::DefaultAsyncSleep>::has_default_timer();
                }
            }
        })
    }

    /// The timer's clock. The default timer's is a constant: no generic
    /// call for rustc to check in every function. A custom sleep's timer
    /// has no name to write: `Timer::clock` reads its type's.
    fn timer_clock(&self, timer: &Ident) -> TokenStream {
        let full = self.full;
        match self.args.sleep {
            None => quote!(#full::DefaultTimer::CLOCK),
            Some(_) => quote!(#full::Timer::clock(&#timer)),
        }
    }

    /// With `admission`, each attempt is admitted first; a refused one is
    /// the result `E::from(Refused)`, which `Loop::failed_admitting`
    /// reports as a give-up and returns (the admitting remembers it). The
    /// question is inline; only an answer other than `Go` awaits.
    fn admitted_async(
        &self,
        clock: TokenStream,
        timer: &Ident,
        attempt: TokenStream,
    ) -> (TokenStream, TokenStream, TokenStream) {
        let full = self.full;
        let krate = self.args.runtime_crate();
        self.admitted(
            clock,
            |admitting| {
                let answer = local("answer");
                quote!({
                    let #answer = #full::Admitting::ask(&mut #admitting);
                    #answer == #krate::limits::Admission::Go || #full::admitted_from(#answer, &mut #admitting, &mut #timer).await
                })
            },
            quote!(#full::NestedAttempt { attempt: #attempt }.await),
        )
    }

    /// What follows an attempt, in the block that decides it: the decision,
    /// with `budget` the charge of the retry it allowed, and the sleep.
    fn after_async_attempt(&self, names: &AsyncLocals, charge: Option<&Charge>) -> TokenStream {
        let private = self.private;
        let AsyncLocals { state, wait, timer, .. } = names;
        let decide = match &self.args.before_retry {
            None => {
                let after_attempt = self.after_attempt(&names.result, &names.below, false);
                quote!(let #wait = #after_attempt;)
            }
            Some(action) => self.decided_with_action(names, &action.value),
        };
        let budget = self.budget;
        let full = self.full;
        let (take_charge, send_charge) = match charge {
            None => (None, None),
            Some(Charge::OfTheLoop(charge)) => (
                Some(quote!(#charge = #private::Loop::take_charge(&mut #state, #budget);)),
                None,
            ),
            Some(Charge::OfTheWait(charge)) => (
                Some(quote!(let #charge = #private::Loop::take_charge(&mut #state, #budget);)),
                Some(quote!(#full::Charged::sent_if_held(#charge);)),
            ),
        };
        self.in_decision_scope(quote! {
            #decide
            #take_charge
            #private::Timer::sleep(&mut #timer, #wait).await;
            #send_charge
        })
    }

    /// The decision with `before_retry`: the action is written here,
    /// evaluated per retry: it may borrow what the body borrows (`&mut self`
    /// included), and its parameter types come from the failure.
    fn decided_with_action(&self, names: &AsyncLocals, action: &syn::Expr) -> TokenStream {
        let krate = self.args.runtime_crate();
        let AsyncLocals {
            result, below, wait, ..
        } = names;
        let next = local("next");
        let after_attempt = self.after_attempt(result, below, true);
        // Spanned on the action: a closure that is not async is
        // reported there (by the bound, and by the `.await`).
        let before_retry = respan(quote!(#krate::bounds::async_before_retry), action.span());
        let act = local("action");
        let run_action = respan(quote!(#act(#next.outcome(), #next.event()).await), action.span());
        let after_action = self.after_action(&next);
        quote! {
            let #next = #after_attempt;
            let #act = #before_retry(#next.outcome(), #action);
            #run_action;
            // The action's time counts: a wait that would now end
            // past `max_elapsed` is not started.
            let #wait = #after_action;
        }
    }
}

/// Where an async loop keeps the retry the budget allowed until it is sent.
enum Charge {
    /// In the wait's scope: the attempt follows the wait at once.
    OfTheWait(Ident),
    /// In a local of the loop: the admission may put the attempt off.
    OfTheLoop(Ident),
}

impl Charge {
    /// The loop's local, when the charge is kept there.
    fn of_the_loop(&self) -> Option<&Ident> {
        match self {
            Charge::OfTheLoop(charge) => Some(charge),
            Charge::OfTheWait(_) => None,
        }
    }
}
