//! The sync loop.
//!
//! The body in a closure, called once inline; only a
//! failure enters the runtime's cold loop.
use super::*;

/// The locals the sync loop binds.
struct SyncLocals {
    /// The sleeper (`sleep = ...`, or the default).
    sleeper: Ident,
    /// The call's start, when something reads it.
    start: Ident,
    /// The body's closure.
    body: Ident,
    /// The first attempt's result.
    first: Ident,
    /// A success's value.
    value: Ident,
    /// A failure.
    failed: Ident,
}

/// How the first attempt's result is matched.
struct Decision {
    /// What is matched: the result, or its judgement by `retry_if_ok`.
    scrutinee: TokenStream,
    /// The success's pattern.
    done: TokenStream,
    /// The failure's pattern.
    again: TokenStream,
    /// The binding of `on_success`, made once.
    bind_on_success: TokenStream,
    /// The `on_success` a first success passes.
    on_success: TokenStream,
    /// The hooks lent to the cold loop for a failure.
    hooks: TokenStream,
}

/// What the first attempt's failure becomes, and with `admission` what
/// surrounds the first attempt.
struct FirstAttempt {
    /// The check that the error type absorbs `Refused`.
    check: TokenStream,
    /// The first question to the limiter, before the attempt.
    admit: TokenStream,
    /// The success told to the limiter.
    observe_success: TokenStream,
    /// The failure handed to the runtime's cold loop.
    retried: TokenStream,
}

impl Generator<'_> {
    /// The sync loop: the body in a closure, called once inline; a success
    /// returns there, only a failure enters the runtime's cold loop.
    pub(super) fn sync_loop(&self, body: TokenStream, body_span: Span) -> TokenStream {
        let args = self.args;
        let sleeper = local("sleeper");
        let action = args.before_retry.as_ref().map(|action| &action.value);
        // `admission` with a judged value (`retry_if_ok`) stays in the
        // function too: its refusal is judged as a result there.
        let admits = self.admission().is_some();
        if action.is_some() || (admits && args.retry_if_ok.is_some()) {
            let sleeper_value = self.sleeper_value(self.full);
            return self.sync_in_function_loop(body, body_span, action, &sleeper, &sleeper_value);
        }
        let names = SyncLocals {
            sleeper,
            start: local("start"),
            body: local("body"),
            first: local_at("first", self.return_span),
            value: local("value"),
            failed: local("failed"),
        };
        let closure = self.body_closure(&body, body_span);
        let (started_first, started_scoped) = self.started_where(&names);
        let decision = self.first_decision(&names);
        let first_attempt = self.first_attempt(&names, &decision.hooks, admits);
        let settle = self.first_attempt_decided(&names, started_scoped, &decision, &first_attempt);
        let helper = each_attempt_runs_the_body_again();
        let FirstAttempt { check, .. } = first_attempt;
        let body_fn = &names.body;
        quote! {
            #check
            #started_first
            let mut #body_fn = {
                #helper
                each_attempt_runs_the_body_again(#closure)
            };
            #settle
        }
    }

    /// The body's closure. A `move` closure keeps the arguments in
    /// registers on the happy path. Only when nothing else of the function
    /// captures them: a hook, a sleep or a policy expression that is a
    /// closure or a computation may read the arguments after the body's
    /// closure is made.
    fn body_closure(&self, body: &TokenStream, body_span: Span) -> TokenStream {
        if self.args.captures_nothing_besides_the_body(self.arguments) {
            quote_spanned!(body_span=> move || { #body })
        } else {
            quote_spanned!(body_span=> || { #body })
        }
    }

    /// The sleeper: `sleep = ...`, checked, or the default under `paths`.
    fn sleeper_value(&self, paths: &Trees) -> TokenStream {
        match self.args.sleep.as_ref().map(|sleep| &sleep.value) {
            Some(custom) => sleep_checked(custom, &self.args.runtime_crate(), false),
            None => quote!(#paths::DefaultSleep),
        }
    }

    /// The sleeper and the start, read before the first attempt: in the
    /// deciding block (the second), or with `context = ...` before the
    /// body's closure (the first), which borrows the attempts' source they
    /// make.
    fn started_where(&self, names: &SyncLocals) -> (TokenStream, TokenStream) {
        if self.attempts.is_some() {
            (
                self.started(names, self.full, &self.policy_outside()),
                TokenStream::new(),
            )
        } else {
            (
                TokenStream::new(),
                self.started(names, self.private, &self.policy.scoped.to_token_stream()),
            )
        }
    }

    /// The sleeper, the start and the attempts' source (`context = ...`),
    /// with the runtime's `paths` and `policy` of where they are written.
    fn started(&self, names: &SyncLocals, paths: &Trees, policy: &TokenStream) -> TokenStream {
        let SyncLocals { sleeper, start, .. } = names;
        let Generator {
            budget, needs_start, ..
        } = self;
        let sleeper_value = self.sleeper_value(paths);
        let attempts_value = self.attempts.map(|attempts| {
            quote! {
                let mut #attempts = #paths::AttemptSource::new(
                    #policy,
                    #start,
                    #paths::BlockingSleep::clock(&#sleeper),
                );
            }
        });
        let read_start = if self.start_unread() {
            quote!(#paths::None)
        } else {
            quote!(#paths::start_blocking(#policy, #budget, #needs_start, &#sleeper))
        };
        quote! {
            let #sleeper = #sleeper_value;
            let #start = #read_start;
            #attempts_value
        }
    }

    /// How the first attempt's result is matched, and the hooks lent for
    /// its failure.
    fn first_decision(&self, names: &SyncLocals) -> Decision {
        let into_first = self.as_plain_result(&names.first);
        let (scrutinee, done, again, hooks) = self.result_match(into_first, &names.value, &names.failed);
        let (bind_on_success, on_success, hooks) = self.on_success_bound(hooks);
        Decision {
            scrutinee,
            done,
            again,
            bind_on_success,
            on_success,
            hooks,
        }
    }

    /// `on_success`, bound once: the first attempt's success reports it
    /// here, a later one in the runtime's loop. Its binding, the hook the
    /// first success passes, and `hooks` with it.
    fn on_success_bound(&self, hooks: TokenStream) -> (TokenStream, TokenStream, TokenStream) {
        let private = self.private;
        let on_success_hook = local("on_success");
        let krate = self.args.runtime_crate();
        match &self.args.on_success {
            Some(WithSpan { value: hook, .. }) => (
                quote_spanned! {hook.span()=>
                    let #on_success_hook: &dyn ::core::ops::Fn(&#krate::Success) = &(#hook);
                },
                quote!(#private::Some(#on_success_hook)),
                quote!(#hooks.on_success(#on_success_hook)),
            ),
            None => (TokenStream::new(), quote!(#private::None), hooks),
        }
    }

    /// The block that runs the first attempt and decides it: a success
    /// returns there, a failure enters the runtime's cold loop.
    fn first_attempt_decided(
        &self,
        names: &SyncLocals,
        started: TokenStream,
        decision: &Decision,
        first_attempt: &FirstAttempt,
    ) -> TokenStream {
        let Generator {
            private, budget, site, ..
        } = self;
        let SyncLocals {
            sleeper,
            start,
            body: body_fn,
            first,
            value,
            ..
        } = names;
        let Decision {
            scrutinee,
            done,
            again,
            bind_on_success,
            on_success,
            ..
        } = decision;
        let FirstAttempt {
            admit,
            observe_success,
            retried,
            ..
        } = first_attempt;
        let succeeded = self.returned_result(quote!(#private::Ok(#value)));
        self.in_decision_scope(quote! {
            #started
            #admit
            #private::enter_attempt();
            let #first = #body_fn();
            #bind_on_success
            match #scrutinee {
                #done => {
                    #observe_success
                    #private::first_success(#budget, &#sleeper, #start, #site, #on_success);
                    #succeeded
                }
                #again => #retried,
            }
        })
    }

    /// The body run again, lent as `&mut dyn Rerun` (the runtime's loop
    /// is one per result type), moved out of its local (`&mut { body }`)
    /// in the failure arm: lending the local itself takes its address,
    /// which keeps its captures in memory on the happy path too
    /// (`scripts/callgrind.sh` counts it), and a closure around it would
    /// be two more (its body and its `rerun`) for every annotated one.
    /// Spanned exactly on the return type: a function that returns no
    /// `Result` is reported once, by the result check.
    fn lent_body(&self, body_fn: &Ident) -> TokenStream {
        let rerunning = {
            let private = self.private.at(self.return_span);
            quote_spanned!(self.return_span=> #private::rerunning)
        };
        quote!(#rerunning(&mut { #body_fn }))
    }

    /// The first attempt's failure handed to the runtime's cold loop, with
    /// `admitted` (the first attempt's admission, or `None`).
    fn retried_blocking(&self, names: &SyncLocals, hooks: &TokenStream, admitted: TokenStream) -> TokenStream {
        let Generator { private, budget, .. } = self;
        let SyncLocals {
            sleeper,
            start,
            body: body_fn,
            failed,
            ..
        } = names;
        let policy = &self.policy.scoped;
        let lent_body = self.lent_body(body_fn);
        self.returned_result(quote! {
            #private::retry_blocking_owned(#policy, #budget, #start, &#hooks, #failed, #lent_body, &#sleeper, #admitted)
        })
    }

    /// What surrounds the first attempt: with `admission` (`admits`), see
    /// [`first_attempt_admitted`](Self::first_attempt_admitted); without,
    /// only its failure handed to the cold loop.
    fn first_attempt(&self, names: &SyncLocals, hooks: &TokenStream, admits: bool) -> FirstAttempt {
        if admits {
            return self.first_attempt_admitted(names, hooks);
        }
        let private = self.private;
        FirstAttempt {
            check: TokenStream::new(),
            admit: TokenStream::new(),
            observe_success: TokenStream::new(),
            retried: self.retried_blocking(names, hooks, quote!(#private::None)),
        }
    }

    /// With `admission`: the first question inline (a refusal is reported
    /// and returned out of line), the success told to the limiter, and the
    /// retries through the runtime's admitted cold loop. The first attempt,
    /// admitted, is held: the limiter hears its end once, a panic's included.
    fn first_attempt_admitted(&self, names: &SyncLocals, hooks: &TokenStream) -> FirstAttempt {
        let private = self.private;
        let SyncLocals {
            sleeper,
            start,
            body: body_fn,
            value,
            failed,
            ..
        } = names;
        let policy = &self.policy.scoped;
        let limit = local("admission_limit");
        let first_admitted = local("first_admitted");
        let clock = quote!(#private::BlockingSleep::clock(&#sleeper));
        let (check, refused) = self.refusal_result();
        let refusal = local("refusal");
        let refused_value = local("refused");
        let into_refused = self.as_plain_result(&refused_value);
        let refused_first = self.returned_result(quote! {
            #private::refused_first_blocking(#policy, #clock, #start, &#hooks, #private::Err(#failed))
        });
        let returned_value = self.returned_result(quote!(#private::Ok(#value)));
        let admitted_by = self.admitted_by();
        FirstAttempt {
            check,
            admit: quote! {
                if let #private::Err(#refusal) = #private::FirstAdmitted::ask(#limit, #clock, &#sleeper) {
                    let #refused_value = #private::refused_as_body(&#body_fn, #refused, #refusal);
                    return match #into_refused {
                        #private::Ok(#value) => #returned_value,
                        #private::Err(#failed) => #refused_first,
                    };
                }
                let #first_admitted = #private::FirstAdmitted::held(#limit, #clock);
            },
            observe_success: quote!(#private::FirstAdmitted::succeeded(#first_admitted, #limit, #clock);),
            retried: self.retried_blocking(names, hooks, quote!(#admitted_by(#first_admitted))),
        }
    }

    /// `FirstAdmitted::for_retries`, spanned as the key's check: a missing `From<Refused>`
    /// is reported once, there.
    fn admitted_by(&self) -> TokenStream {
        let private = self.private;
        match &self.args.admission {
            Some(admission) => respan_exactly(
                quote!(#private::FirstAdmitted::for_retries),
                Span::mixed_site().located_at(admission.key_span),
            ),
            None => quote!(#private::FirstAdmitted::for_retries),
        }
    }
}

/// A helper of the user's crate, on the attribute: when the body moves
/// what the next attempt needs, rustc's E0507 help points at its `FnMut`
/// bound, which is the `#[retry]` line, never the runtime's source.
fn each_attempt_runs_the_body_again() -> TokenStream {
    quote_spanned! {Span::call_site()=>
        #[inline]
        fn each_attempt_runs_the_body_again<R, F: ::core::ops::FnMut() -> R>(so_borrow_or_clone_what_it_moves: F) -> F {
            so_borrow_or_clone_what_it_moves
        }
    }
}
