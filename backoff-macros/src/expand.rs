//! Code generation: the validated arguments and the function become a retry
//! loop around the function's own body.
//!
//! The body's tokens appear exactly once, run in place per attempt: sync
//! bodies in a non-`move` closure (called once inline; only on failure handed
//! to the runtime's `#[cold]` loop), async bodies in a non-`move` async block
//! inside a loop that stays in the function. Both start with the "fake return
//! edge" of tracing-attributes, which gives the block the function's return
//! type so `?` conversions and coercions work as in the plain function.

use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::visit_mut::VisitMut;
use syn::{ReturnType, Type};

use crate::args::{Args, WithSpan};
use crate::item::RetryFn;
use crate::values::{HintArg, JitterArg, NestedArg};

/// `tokens` moved to `span` (each keeps its own hygiene), so an error about
/// them points at the user's token (the return type, a key) instead of the
/// attribute.
pub(crate) fn respan(tokens: TokenStream, span: Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|mut token| {
            if let proc_macro2::TokenTree::Group(group) = &token {
                let mut inner = proc_macro2::Group::new(group.delimiter(), respan(group.stream(), span));
                inner.set_span(group.span().located_at(span));
                token = proc_macro2::TokenTree::Group(inner);
            } else {
                token.set_span(token.span().located_at(span));
            }
            token
        })
        .collect()
}

/// `tokens` given `span` outright, hygiene included: for absolute paths
/// (which resolve the same with any hygiene) whose obligations must carry
/// exactly the span of a check on the user's token, so that rustc reports
/// the check's error and drops this one as its duplicate.
fn respan_exactly(tokens: TokenStream, span: Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|mut token| {
            if let proc_macro2::TokenTree::Group(group) = &token {
                let mut inner = proc_macro2::Group::new(group.delimiter(), respan_exactly(group.stream(), span));
                inner.set_span(span);
                token = proc_macro2::TokenTree::Group(inner);
            } else {
                token.set_span(span);
            }
            token
        })
        .collect()
}

/// A local of the generated code located at `span` (so type errors about it
/// point there), still invisible to the user's body.
fn local_at(name: &str, span: Span) -> Ident {
    format_ident!("__backoff_{}", name, span = Span::mixed_site().located_at(span))
}

/// A local of the generated code, invisible to the user's body (mixed-site hygiene).
fn local(name: &str) -> Ident {
    format_ident!("__backoff_{}", name, span = Span::mixed_site())
}

/// Whether the runtime's tracing events show what failed (its `tracing`
/// feature turns on this crate's): only then does the expansion probe the
/// error's type for its `Debug` form and attributes. Without it the probe
/// would find nothing to report, and is left out of every expansion.
const REPORTS_WHAT_FAILED: bool = cfg!(feature = "tracing");

/// Whether the runtime's `tokio` feature is on (it turns on this crate's):
/// only without it does an async loop with no `sleep = ...` need the check
/// whose error says so.
const SLEEPS_ON_TOKIO: bool = cfg!(feature = "tokio");

/// The whole rewritten function.
pub(crate) fn expand(args: &Args, function: RetryFn) -> TokenStream {
    let RetryFn {
        attrs,
        inner_attrs,
        vis,
        defaultness,
        mut sig,
        brace,
        stmts,
        facts,
    } = function;
    let krate = args.runtime_crate();
    // The runtime's expansion paths: in full where the user's body is in
    // scope (the body, the attempt, what comes before the loop); after an
    // attempt, in the block that decides it (which holds none of the body's
    // tokens), under one short name that block imports, with the items it
    // needs (see `decision_items` below): no item of the expansion is in
    // scope of the body, so none shadows a user item.
    let full = quote!(#krate::__private);
    let private = quote!(__backoff_rt);
    // Each attempt starts from the caller's values of `mut` arguments.
    let arguments = crate::fresh::argument_names(&sig);
    let fresh_args = crate::fresh::strip_mut_args(&mut sig, &full);
    let policy = policy_binding(args, &full, &private);
    let (budget_item, budget) = budget_binding(args, &full);
    let admission_item = admission_binding(args, &full);

    // Mixed-site hygiene, so the generated locals spanned here stay
    // invisible to the body; the result check and the loop's calls carry
    // exactly this span (see `respan_exactly`).
    let return_span = match &sig.output {
        ReturnType::Type(_, ty) => ty.span(),
        ReturnType::Default => sig.ident.span(),
    };
    let return_span = Span::mixed_site().located_at(return_span);
    let edge = fake_return_edge(&sig.output, &full);
    let attempts = local("attempts");
    // `let attempt: Attempt = ...;` with the user's name: visible in the body.
    let context = args.context.as_ref().map(|context| {
        let name = &context.value;
        quote! { let #name: #krate::Attempt = #attempts.next_attempt(); }
    });
    let body = quote_spanned! {brace.span.join()=>
        #edge
        #fresh_args
        #context
        #(#stmts)*
    };

    let (site_item, site_expr) = site_item(args, &private, &sig.ident, sig.receiver().is_some());
    // The probe's traits, in scope where an attempt is decided (never in
    // the body's, whose method calls they would change).
    let probe_traits = REPORTS_WHAT_FAILED.then(|| {
        quote! {
            #[allow(unused_imports)]
            use #private::probe::{ProbeBoth as _, ProbeConventions as _, ProbeDebug as _, ProbeNeither as _};
        }
    });
    let scoped_policy = &policy.scoped_item;
    let decision_items = quote! {
        use #krate::__private as __backoff_rt;
        #scoped_policy
        #site_item
        #probe_traits
    };
    let mut generator = Generator {
        return_type: nameable_return_type(&sig.output),
        args,
        private: &private,
        full: &full,
        policy: &policy,
        budget: &budget,
        site: site_expr,
        decision_items,
        needs_start: args.needs_start(),
        return_span,
        attempts: args.context.is_some().then_some(&attempts),
        arguments: &arguments,
    };

    let mut stmts = stmts;
    let async_trait_block = if facts.is_async_trait {
        crate::item::async_trait_block(&mut stmts)
    } else {
        None
    };
    let async_trait = async_trait_block.and_then(|block| {
        // `mut` arguments that `#[async_trait]` moved into its block.
        let moved_fresh = crate::fresh::strip_async_trait_rebinds(&mut block.stmts, &full);
        crate::item::async_trait_ret(block).map(|(ret_type, user_block)| (ret_type, user_block, moved_fresh))
    });
    let retry_loop = if let Some((ret_type, user_block, moved_fresh)) = async_trait {
        // `#[async_trait]` already turned the method into
        // `Box::pin(async move { ...; let __ret: R = { body }; __ret })`:
        // retry `body` inside that block (its argument moves run once).
        let user_stmts = &user_block.stmts;
        generator.return_type = ret_type_tokens(&ret_type);
        let check = result_check(&full, &generator.return_type, return_span);
        let edge = fake_return_edge(&ReturnType::Type(Default::default(), Box::new(ret_type)), &full);
        let body = quote_spanned! {user_block.brace_token.span.join()=>
            #edge
            #fresh_args
            #moved_fresh
            #context
            #(#user_stmts)*
        };
        let loop_tokens = generator.async_loop(body, user_block.brace_token.span.join());
        *user_block = syn::parse_quote!({ #check #loop_tokens });
        quote!(#(#stmts)*)
    } else {
        let check = result_check(&full, &nameable_return_type(&sig.output), return_span);
        let retry_loop = if facts.is_async {
            generator.async_loop(body, brace.span.join())
        } else {
            generator.sync_loop(body, brace.span.join())
        };
        quote!(#check #retry_loop)
    };

    let policy_item = &policy.item;
    let mut block = TokenStream::new();
    brace.surround(&mut block, |out| {
        out.extend(quote! {
            #(#inner_attrs)*
            #policy_item
            #budget_item
            #admission_item
            #retry_loop
        });
    });
    quote! {
        #(#attrs)*
        #vis #defaultness #sig #block
    }
}

/// What the two loop shapes share: the arguments, the policy and the
/// hooks of one function.
struct Generator<'a> {
    /// The return type, as [`nameable_return_type`] makes it.
    return_type: TokenStream,
    args: &'a Args,
    /// The runtime's expansion paths inside the block that decides an
    /// attempt, which imports them (`__backoff_rt`).
    private: &'a TokenStream,
    /// The same paths in full, for everything outside that block.
    full: &'a TokenStream,
    policy: &'a PolicyBinding,
    /// `Some(&RetryBudget)` or `None`.
    budget: &'a TokenStream,
    /// The function's site, as `Site` (see [`site_item`]).
    site: TokenStream,
    /// The items the block that decides an attempt declares first: the
    /// import of `__backoff_rt`, the policy's constant, the site's static,
    /// the probe's traits.
    decision_items: TokenStream,
    needs_start: bool,
    return_span: Span,
    /// The local holding the `AttemptSource`, with `context = ...`.
    attempts: Option<&'a Ident>,
    /// The names the function's arguments bind, `self` included.
    arguments: &'a [Ident],
}

impl Generator<'_> {
    /// `RetryResult::into_result(value)`, spanned exactly on the return
    /// type: a function that returns no `Result` is reported once, by the
    /// result check, whose error this one duplicates.
    fn as_plain_result(&self, value: &Ident) -> TokenStream {
        let private = self.private;
        // The call and its argument (a local of the expansion, which keeps
        // its hygiene: the return span is mixed-site too).
        respan_exactly(quote!(#private::RetryResult::into_result(#value)), self.return_span)
    }

    /// `RetryResult::from_result(result)`, spanned as [`as_plain_result`](Self::as_plain_result).
    fn returned_result(&self, result: TokenStream) -> TokenStream {
        let private = self.private;
        let path = respan_exactly(quote!(#private::RetryResult::from_result), self.return_span);
        quote!(#path(#result))
    }

    /// The hooks lent to the loop where an attempt is decided, typed by
    /// `seed` (a `Hooks::for_error(&error)` or `Hooks::for_result(&result)`
    /// call) and probed on `seen` (what the observers see, for the events'
    /// `Debug` form and attributes). `with_on_success`: whether the loop
    /// that reads them reports a success.
    fn hooks(&self, seed: TokenStream, seen: &TokenStream, with_on_success: bool) -> TokenStream {
        self.hooks_judged_by(seed, seen, with_on_success, None)
    }

    /// [`hooks`](Self::hooks), with `retry_if_ok` lent as `judge` (the
    /// predicate the success path already judged with) when it is given.
    fn hooks_judged_by(
        &self,
        seed: TokenStream,
        seen: &TokenStream,
        with_on_success: bool,
        judge: Option<&Ident>,
    ) -> TokenStream {
        let private = self.private;
        let site = &self.site;
        let mut chain = quote!(#private::Hooks::#seed.at(#site));
        let args = self.args;
        let on_success = if with_on_success { &args.on_success } else { &None };
        // `retry_if_ok` first: from there on the observers see the whole result.
        for (method, hook) in [
            ("retry_if_ok", &args.retry_if_ok),
            ("retry_if", &args.retry_if),
            ("retry_after", &args.retry_after),
            ("retry_after_ok", &args.retry_after_ok),
            ("pending_error", &args.pending_error),
            ("throttled_if", &args.throttled_if),
            ("on_retry", &args.on_retry),
            ("on_give_up", &args.on_give_up),
            ("on_success", on_success),
        ] {
            if let Some(WithSpan { value: hook, .. }) = hook {
                // Lent as `&dyn Fn(..)`: a hook of the wrong type is one
                // error on the user's token, in the hook's public signature.
                let lent = match judge {
                    Some(judge) if method == "retry_if_ok" => quote!(#judge),
                    _ => quote_spanned!(hook.span()=> &(#hook)),
                };
                let method = Ident::new(method, hook.span());
                chain = quote!(#chain.#method(#lent));
            }
        }
        if matches!(args.nested.as_ref().map(|nested| nested.value), Some(NestedArg::Retry)) {
            chain = quote!(#chain.retry_nested(true));
        }
        if !REPORTS_WHAT_FAILED {
            return chain;
        }
        // How the events see what failed, found by autoref specialisation
        // on the concrete type: its `Debug` form, OpenTelemetry's
        // attributes. No bound on it.
        quote!(#chain.report_with((&&&&#private::Probe::of(#seen)).report()))
    }

    /// How an attempt's result is matched: as it is, or with `retry_if_ok`
    /// judged here (the predicate written once and lent to the loop), so a
    /// success returns without the runtime. The scrutinee, the success's
    /// pattern (binding `value`), the failure's (binding `failed`) and the
    /// hooks lent for a failure.
    fn result_match(
        &self,
        result: TokenStream,
        value: &Ident,
        failed: &Ident,
    ) -> (TokenStream, TokenStream, TokenStream, TokenStream) {
        let private = self.private;
        match &self.args.retry_if_ok {
            Some(WithSpan { value: retry_if_ok, .. }) => {
                let judge = local("judge");
                let lent = quote_spanned!(retry_if_ok.span()=> &(#retry_if_ok));
                (
                    quote!(#private::judged(#result, #lent)),
                    quote!(#private::Judged::Done(#value)),
                    quote!(#private::Judged::Again(#failed, #judge)),
                    self.hooks_judged_by(quote!(for_result(&#failed)), &quote!(&#failed), false, Some(&judge)),
                )
            }
            None => (
                result,
                quote!(#private::Ok(#value)),
                quote!(#private::Err(#failed)),
                self.hooks(quote!(for_error(&#failed)), &quote!(&#failed), false),
            ),
        }
    }

    /// `on_success` as the success path of the expansion passes it.
    fn on_success(&self) -> TokenStream {
        let private = self.private;
        match &self.args.on_success {
            Some(WithSpan { value: hook, .. }) => quote_spanned!(hook.span()=> #private::Some(&(#hook))),
            None => quote!(#private::None),
        }
    }

    /// What follows an attempt of a loop that stays in the function:
    /// `result` and `below` (whether a retried call below gave up) are
    /// bound; a success returns, a failure goes to the runtime's cold
    /// entry, which returns the final result or hands back the retry (its
    /// wait, or with an action the `NextAttempt`).
    fn after_attempt(&self, result: &Ident, below: &Ident, acts: bool) -> TokenStream {
        let Generator {
            private, budget, site, ..
        } = self;
        let policy = &self.policy.scoped;
        let mode = if acts {
            quote!(#private::Acts)
        } else {
            quote!(#private::Waits)
        };
        let state = local("loop");
        let retry = local("retry");
        let into_result = self.as_plain_result(result);
        let returned = self.returned_result(quote!(#result));
        let value = local("value");
        let failed = local("failed");
        let (scrutinee, done, again, hooks) = self.result_match(into_result, &value, &failed);
        let on_success = self.on_success();
        let succeeded = self.returned_result(quote!(#private::Ok(#value)));
        // With `admission`, the limiter hears how each attempt ended.
        let (observe_success, failed_entry, admitting_arg) = match self.admission() {
            Some(admitting) => (
                quote!(#private::Admitting::observed(&#admitting, false);),
                quote!(#private::Loop::failed_admitting),
                quote!(&#admitting,),
            ),
            None => (TokenStream::new(), quote!(#private::Loop::failed), TokenStream::new()),
        };
        quote! {
            match #scrutinee {
                #done => {
                    #observe_success
                    #private::Loop::succeeded(&mut #state, #budget, #site, #on_success);
                    return #succeeded;
                }
                #again => {
                    match #failed_entry(&mut #state, #mode, #policy, #budget, #admitting_arg &#hooks, #failed, #below) {
                        #private::Step::Return(#result) => return #returned,
                        #private::Step::Retry(#retry) => #retry,
                    }
                }
            }
        }
    }

    /// `rest` (what follows an attempt) in the block of its own that
    /// decides it, after the items that block declares.
    fn in_decision_scope(&self, rest: TokenStream) -> TokenStream {
        let items = &self.decision_items;
        quote! {{ #items #rest }}
    }

    /// A `&Policy` outside the block that decides an attempt (for
    /// `context` and `timeout`, which name it before the attempt): the
    /// local of `policy = EXPR`, or the literal keys in an inline `const`
    /// block, written only where asked for.
    fn policy_outside(&self) -> TokenStream {
        if self.policy.literal_deadline.is_none() {
            return self.policy.scoped.clone();
        }
        let full = self.full;
        let value = policy_expr(self.args, full);
        quote!(const { &#value })
    }

    /// The loop's state on `clock`, which reads the call's start only when
    /// something needs it: with literal keys the expansion knows whether
    /// `max_elapsed` does; a `policy = EXPR` is asked.
    fn loop_start(&self, clock: TokenStream) -> TokenStream {
        let Generator {
            full,
            budget,
            needs_start,
            ..
        } = self;
        match self.policy.literal_deadline {
            Some(deadline) => {
                let reads_start = *needs_start || deadline;
                quote!(#full::Loop::begin(#clock, #budget, #reads_start))
            }
            None => {
                let policy = &self.policy.scoped;
                quote!(#full::Loop::start(#clock, #policy, #budget, #needs_start))
            }
        }
    }

    /// After the action on `next`: the wait, unless the action ran past
    /// `max_elapsed` (then the final result returns).
    fn after_action(&self, next: &Ident) -> TokenStream {
        let private = self.private;
        let policy = &self.policy.scoped;
        let state = local("loop");
        let result = local("result");
        let wait = local("wait");
        let seed = if self.args.retry_if_ok.is_some() {
            quote!(for_result(#next.outcome()))
        } else {
            quote!(for_error(#next.outcome()))
        };
        let hooks = self.hooks(seed, &quote!(#next.outcome()), false);
        let returned = self.returned_result(quote!(#result));
        quote! {
            match #private::Loop::after_action(&mut #state, #policy, &#hooks, #next) {
                #private::Step::Return(#result) => return #returned,
                #private::Step::Retry(#wait) => #wait,
            }
        }
    }

    /// The async loop: the body in a non-`move` async block per attempt, the
    /// decision after each, and the sleep; it stays in the function.
    fn async_loop(&self, body: TokenStream, body_span: Span) -> TokenStream {
        let Generator {
            args,
            private,
            full,
            attempts,
            ..
        } = self;
        let state = local("loop");
        let result = local_at("result", self.return_span);
        let below = local("below");
        let krate = args.runtime_crate();
        let mut timeout_check = None;
        let mut attempt = quote_spanned!(body_span=> async { #body });
        if let Some(limit) = &args.timeout {
            // Spanned on the `timeout` key: an error about the timed-out
            // attempt (no `E: From<Elapsed>`) points there.
            // The check (a type position) and the call carry exactly the
            // same span: rustc reports the check's error alone.
            let exact = Span::mixed_site().located_at(limit.key_span);
            let return_type = erase_lifetimes(&self.return_type);
            let check = respan_exactly(
                quote! {
                    let _ = <<#return_type as #krate::bounds::RetryResult>::Err as #krate::bounds::FromElapsed>::from_elapsed;
                },
                exact,
            );
            if !has_placeholder(&self.return_type) {
                timeout_check = Some(check);
            }
            let timed_out = respan_exactly(quote!(#full::timed_out_result()), exact);
            let with_timeout = respan(quote!(#full::with_timeout::<#full::TokioTimer, _, _>), limit.key_span);
            let limit = duration_tokens(limit.value, full);
            let policy = self.policy_outside();
            attempt = quote!(#with_timeout(#state.attempt_limit(#policy, #limit), #attempt, #timed_out));
        }
        let action = args.before_retry.as_ref().map(|action| &action.value);
        // Neither the attempt's result nor the wait is used after the
        // sleep's `.await`: neither takes room in the future.
        let wait = local("wait");
        let timer = local("timer");
        let timer_value = match args.sleep.as_ref().map(|sleep| &sleep.value) {
            Some(custom) => sleep_checked(custom, &krate, true),
            None => quote!(#full::TokioTimer::new()),
        };
        // Without `sleep = ...` the loop sleeps on tokio: a missing feature
        // is this check's error, in the user's words (left out when the
        // runtime's `tokio` feature is on, which turns on this crate's).
        let tokio_check = (args.sleep.is_none() && !SLEEPS_ON_TOKIO).then(|| {
            let return_type = if has_placeholder(&self.return_type) {
                quote!(())
            } else {
                erase_lifetimes(&self.return_type)
            };
            quote! {
                if false {
                    <#return_type as #full::DefaultAsyncSleep>::tokio_sleeps();
                }
            }
        });
        let timer_clock = quote!(#full::timer_clock(&#timer));
        let attempts_value = attempts.map(|attempts| {
            let policy = self.policy_outside();
            quote!(let mut #attempts = #state.attempts(#policy);)
        });
        // With `admission`, each attempt is admitted first; a refused one
        // is the result `E::from(Refused)`, which `Loop::failed_admitting`
        // reports as a give-up and returns (the admitting remembers it).
        let (admission_check, admitting_value, attempt) = match self.admission() {
            Some(admitting) => {
                let (check, refused) = self.refusal_result();
                let limit = local("admission_limit");
                (
                    check,
                    quote!(let mut #admitting = #full::Admitting::of_dyn(#limit, #timer_clock);),
                    quote! {
                        if #full::admitted(&mut #admitting, &mut #timer).await {
                            #full::NestedAttempt::new(#attempt).await
                        } else {
                            (#refused(), false)
                        }
                    },
                )
            }
            None => (
                TokenStream::new(),
                TokenStream::new(),
                quote!(#full::NestedAttempt::new(#attempt).await),
            ),
        };
        let decide = match action {
            None => {
                let after_attempt = self.after_attempt(&result, &below, false);
                quote!(let #wait = #after_attempt;)
            }
            Some(action) => {
                // The action is written here, evaluated per retry: it may
                // borrow what the body borrows (`&mut self` included), and
                // its parameter types come from the failure.
                let next = local("next");
                let after_attempt = self.after_attempt(&result, &below, true);
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
        };
        let after = self.in_decision_scope(quote! {
            #decide
            #private::Timer::sleep(&mut #timer, #wait).await;
        });
        let loop_state = self.loop_start(timer_clock);
        quote! {
            #timeout_check
            #admission_check
            #tokio_check
            let mut #timer = #timer_value;
            let mut #state = #loop_state;
            #admitting_value
            #attempts_value
            loop {
                let (#result, #below) = #attempt;
                #after
            }
        }
    }

    /// The sync loop: the body in a closure, called once inline; a success
    /// returns there, only a failure enters the runtime's cold loop.
    fn sync_loop(&self, body: TokenStream, body_span: Span) -> TokenStream {
        let Generator {
            args,
            private,
            full,
            budget,
            site,
            needs_start,
            attempts,
            ..
        } = self;
        let start = local("start");
        let body_fn = local("body");
        let first = local_at("first", self.return_span);
        // A `move` closure keeps the arguments in registers on the happy
        // path. Only when nothing else of the function captures them: a
        // hook, a sleep or a policy expression that is a closure or a
        // computation may read the arguments after the body's closure is
        // made.
        let closure = if args.captures_nothing_besides_the_body(self.arguments) {
            quote_spanned!(body_span=> move || { #body })
        } else {
            quote_spanned!(body_span=> || { #body })
        };
        let sleeper = local("sleeper");
        let sleeper_value = |paths: &TokenStream| match args.sleep.as_ref().map(|sleep| &sleep.value) {
            Some(custom) => sleep_checked(custom, &args.runtime_crate(), false),
            None => quote!(#paths::DefaultSleep),
        };
        let action = args.before_retry.as_ref().map(|action| &action.value);
        if action.is_some() || self.admission().is_some() {
            return self.sync_in_function_loop(body, body_span, action, &sleeper, &sleeper_value(full));
        }
        // The sleeper and the start, read before the first attempt: in the
        // deciding block, or with `context = ...` before the body's closure,
        // which borrows the attempts' source they make.
        let started = |paths: &TokenStream, policy: &TokenStream| {
            let sleeper_value = sleeper_value(paths);
            let attempts_value = attempts.map(|attempts| {
                quote! {
                    let mut #attempts = #paths::AttemptSource::new(
                        #policy,
                        #start,
                        #paths::BlockingSleep::clock(&#sleeper),
                    );
                }
            });
            quote! {
                let #sleeper = #sleeper_value;
                let #start = #paths::start_blocking(#policy, #budget, #needs_start, &#sleeper);
                #attempts_value
            }
        };
        let (started_first, started_scoped) = if attempts.is_some() {
            (started(full, &self.policy_outside()), TokenStream::new())
        } else {
            (TokenStream::new(), started(private, &self.policy.scoped))
        };
        let policy = &self.policy.scoped;
        let into_first = self.as_plain_result(&first);
        let value = local("value");
        let succeeded = self.returned_result(quote!(#private::Ok(#value)));
        let failed = local("failed");
        let (scrutinee, done, again, hooks) = self.result_match(into_first, &value, &failed);
        // `on_success` is bound once: the first attempt's success reports it
        // here, a later one in the runtime's loop.
        let on_success_hook = local("on_success");
        let krate = args.runtime_crate();
        let (bind_on_success, on_success, hooks) = match &args.on_success {
            Some(WithSpan { value: hook, .. }) => (
                quote_spanned! {hook.span()=>
                    let #on_success_hook: &dyn ::core::ops::Fn(&#krate::Success) = &(#hook);
                },
                quote!(#private::Some(#on_success_hook)),
                quote!(#hooks.on_success(#on_success_hook)),
            ),
            None => (TokenStream::new(), quote!(#private::None), hooks),
        };
        // The body runs again lent as `&mut dyn Rerun` (the runtime's loop
        // is one per result type), moved out of its local (`&mut { body }`)
        // in the failure arm: lending the local itself takes its
        // address, which keeps its captures in memory on the happy path too
        // (`scripts/callgrind.sh` counts it), and a closure around it would
        // be two more (its body and its `rerun`) for every annotated one.
        // Spanned exactly on the return type: a function that returns no
        // `Result` is reported once, by the result check.
        let rerunning = respan_exactly(quote!(#private::rerunning), self.return_span);
        let lent_body = quote!(#rerunning(&mut { #body_fn }));
        let retried = self.returned_result(quote! {
            #private::retry_blocking_owned(#policy, #budget, #start, &#hooks, #failed, #lent_body, &#sleeper)
        });
        let settle = self.in_decision_scope(quote! {
            #started_scoped
            #private::enter_attempt();
            let #first = #body_fn();
            #bind_on_success
            match #scrutinee {
                #done => {
                    #private::first_success(#budget, &#sleeper, #start, #site, #on_success);
                    #succeeded
                }
                #again => #retried,
            }
        });
        quote! {
            #started_first
            let mut #body_fn = #full::each_attempt_runs_the_body_again(#closure);
            #settle
        }
    }

    /// The sync loop of a function with `before_retry` or `admission`: it
    /// stays in the function, as the async loop does, so the action
    /// (written here, evaluated per retry) may borrow what the body borrows,
    /// `&mut self` included, and a refused attempt returns from it; the
    /// body's closure is made and called per attempt.
    fn sync_in_function_loop(
        &self,
        body: TokenStream,
        body_span: Span,
        action: Option<&syn::Expr>,
        sleeper: &Ident,
        sleeper_value: &TokenStream,
    ) -> TokenStream {
        let Generator {
            private,
            full,
            attempts,
            ..
        } = self;
        let state = local("loop");
        let result = local_at("result", self.return_span);
        let below = local("below");
        let wait = local("wait");
        let krate = self.args.runtime_crate();
        let attempt = quote_spanned!(body_span=> #full::blocking_attempt(|| { #body }));
        let attempts_value = attempts.map(|attempts| {
            let policy = self.policy_outside();
            quote!(let mut #attempts = #state.attempts(#policy);)
        });
        // With `admission`, as in the async loop: a refused attempt is the
        // result `E::from(Refused)`, reported and returned as a give-up.
        let (admission_check, admitting_value, attempt) = match self.admission() {
            Some(admitting) => {
                let (check, refused) = self.refusal_result();
                let limit = local("admission_limit");
                (
                    check,
                    quote! {
                        let mut #admitting = #full::Admitting::of_dyn(#limit, #full::BlockingSleep::clock(&#sleeper));
                    },
                    quote! {
                        if #full::Admitting::admit_blocking(&mut #admitting, &|#wait| #full::BlockingSleep::sleep(&#sleeper, #wait)) {
                            #attempt
                        } else {
                            (#refused(), false)
                        }
                    },
                )
            }
            None => (TokenStream::new(), TokenStream::new(), attempt),
        };
        let decide = match action {
            Some(action) => {
                let next = local("next");
                let act = local("action");
                let after_attempt = self.after_attempt(&result, &below, true);
                let after_action = self.after_action(&next);
                // Typed through the public `bounds::sync_before_retry`, spanned on
                // the action: a wrong one is reported there. What it returns is
                // checked through the public trait's method, on the action.
                let sync_before_retry = respan(quote!(#krate::bounds::sync_before_retry), action.span());
                let run_action = respan(
                    quote!(<_ as #krate::bounds::SyncBeforeRetry>::returned(#act(#next.outcome(), #next.event()))),
                    action.span(),
                );
                quote! {
                    let #next = #after_attempt;
                    let #act = #sync_before_retry(#next.outcome(), #action);
                    #run_action;
                    let #wait = #after_action;
                }
            }
            None => {
                let after_attempt = self.after_attempt(&result, &below, false);
                quote!(let #wait = #after_attempt;)
            }
        };
        let after = self.in_decision_scope(quote! {
            #decide
            #private::BlockingSleep::sleep(&#sleeper, #wait);
        });
        let loop_state = self.loop_start(quote!(#full::BlockingSleep::clock(&#sleeper)));
        quote! {
            #admission_check
            let #sleeper = #sleeper_value;
            let mut #state = #loop_state;
            #admitting_value
            #attempts_value
            loop {
                let (#result, #below) = #attempt;
                #after
            }
        }
    }

    /// The local holding the call's `Admitting`, with `admission = ...`.
    fn admission(&self) -> Option<Ident> {
        self.args.admission.as_ref().map(|_| local("admitting"))
    }

    /// With `admission = ...`: the check that the error type absorbs
    /// `Refused` (a type position spanned exactly on the key, so rustc
    /// reports it alone) and the function pointer of the refused result.
    fn refusal_result(&self) -> (TokenStream, TokenStream) {
        let Some(admission) = &self.args.admission else {
            return (TokenStream::new(), TokenStream::new());
        };
        let krate = self.args.runtime_crate();
        let exact = Span::mixed_site().located_at(admission.key_span);
        let return_type = erase_lifetimes(&self.return_type);
        let check = if has_placeholder(&self.return_type) {
            TokenStream::new()
        } else {
            respan_exactly(
                quote! {
                    let _ = <<#return_type as #krate::bounds::RetryResult>::Err as #krate::bounds::FromRefused>::from_refused;
                },
                exact,
            )
        };
        let full = self.full;
        let refused = respan_exactly(quote!(#full::refused_result()), exact);
        (check, refused)
    }
}

/// The function's static site (its name, made once) as an item, and the
/// expression of its `Site`: the name written with `name = "..."`, else
/// its path (the module's, or for a method the type of `self`'s).
fn site_item(args: &Args, private: &TokenStream, function: &Ident, has_receiver: bool) -> (TokenStream, TokenStream) {
    let site = local("SITE");
    let new_site = match &args.name {
        Some(WithSpan { value: name, .. }) => quote!(#private::CallSite::named(#name)),
        None => {
            let function = function.unraw().to_string();
            quote!(#private::CallSite::new(#function, ::core::module_path!()))
        }
    };
    let item = quote!(static #site: #private::CallSite = #new_site;);
    // A `&'static Site`, made at compile time: passing it costs the
    // happy path nothing. A method's names the type of `Self`, which an
    // item inside it cannot: an inline `const` block there.
    if has_receiver && args.name.is_none() {
        let expr = quote!(const { &#private::method_site(&#site, ::core::any::type_name::<Self>) });
        return (item, expr);
    }
    let at = local("AT");
    let items = quote! {
        #item
        const #at: &#private::Site = &#private::static_site(&#site);
    };
    (items, quote!(#at))
}

/// The user's `sleep = ...`, handed to the loop through the public
/// `bounds::sync_sleep` or `bounds::async_sleep`, spanned on it: the one
/// function whose bounds say what a sleep is (`Fn(Duration)` returning `()`,
/// or a future), so a sleep of the wrong type is one error on the user's
/// token; the loop asks nothing more of what it returns.
fn sleep_checked(custom: &syn::Expr, krate: &syn::Path, is_async: bool) -> TokenStream {
    let check = if is_async {
        quote!(#krate::bounds::async_sleep)
    } else {
        quote!(#krate::bounds::sync_sleep)
    };
    let check = respan(check, custom.span());
    quote_spanned!(custom.span()=> #check(#custom))
}

/// `if false { return never::<R>(); }` with `impl Trait` in `R` replaced
/// by `_`: types the closure or async block as the function.
fn fake_return_edge(output: &ReturnType, private: &TokenStream) -> TokenStream {
    let ty = nameable_return_type(output);
    quote! {
        if false {
            return #private::never::<#ty>();
        }
    }
}

/// The check that the function returns a `Result`, spanned on the return
/// type: a type position (no "required by a bound in" an internal
/// function), the same obligation at the same span as the loop's own, which
/// rustc then reports once.
///
/// None when the type holds `impl Trait` (erased to `_`, which such a check
/// cannot infer): the loop's own bound then reports it.
fn result_check(private: &TokenStream, return_type: &TokenStream, span: Span) -> TokenStream {
    if has_placeholder(return_type) {
        return TokenStream::new();
    }
    let return_type = erase_lifetimes(return_type);
    let check = respan_exactly(
        quote!(::core::marker::PhantomData<<#return_type as #private::RetryResult>::Ok>),
        span,
    );
    quote! { let _: #check; }
}

/// Whether `tokens` hold a `_` (an erased `impl Trait`).
fn has_placeholder(tokens: &TokenStream) -> bool {
    tokens.clone().into_iter().any(|token| match token {
        proc_macro2::TokenTree::Ident(ident) => ident == "_",
        proc_macro2::TokenTree::Group(group) => has_placeholder(&group.stream()),
        _ => false,
    }) || tokens.to_string().split_whitespace().any(|word| word == "_")
}

/// `ty` with every lifetime `'_` (see [`LifetimeEraser`]).
fn erase_lifetimes(ty: &TokenStream) -> TokenStream {
    match syn::parse2::<Type>(ty.clone()) {
        Ok(mut ty) => {
            LifetimeEraser.visit_type_mut(&mut ty);
            quote!(#ty)
        }
        Err(_) => ty.clone(),
    }
}

/// [`nameable_return_type`] of the return type of an `#[async_trait]` block.
fn ret_type_tokens(ty: &Type) -> TokenStream {
    nameable_return_type(&ReturnType::Type(Default::default(), Box::new(ty.clone())))
}

/// Replaces every lifetime with `'_`: the check respans the type with
/// mixed-site hygiene, under which the function's lifetimes do not resolve.
struct LifetimeEraser;

impl VisitMut for LifetimeEraser {
    fn visit_lifetime_mut(&mut self, lifetime: &mut syn::Lifetime) {
        lifetime.ident = Ident::new("_", lifetime.ident.span());
    }
}

/// The function's return type as the generated code may name it: `impl
/// Trait` replaced by `_`, `()` when none is written.
pub(crate) fn nameable_return_type(output: &ReturnType) -> TokenStream {
    match output {
        ReturnType::Type(_, ty) => {
            let mut ty = (**ty).clone();
            ImplTraitEraser.visit_type_mut(&mut ty);
            quote!(#ty)
        }
        ReturnType::Default => quote!(()),
    }
}

/// Replaces every `impl Trait` with `_`, as tracing-attributes does.
struct ImplTraitEraser;

impl VisitMut for ImplTraitEraser {
    fn visit_type_mut(&mut self, ty: &mut Type) {
        if let Type::ImplTrait(impl_trait) = ty {
            *ty = Type::Infer(syn::TypeInfer {
                attrs: Vec::new(),
                underscore_token: syn::Token![_](impl_trait.impl_token.span),
            });
            return;
        }
        syn::visit_mut::visit_type_mut(self, ty);
    }
}

/// The policy of one function, as the loop names it: a `const` item built
/// from the literal keys (nothing stored in the function's state, nothing
/// computed per call), or the user's `policy = EXPR` evaluated once per call
/// and borrowed.
struct PolicyBinding {
    /// The statement at the top of the function (`policy = EXPR`), or nothing.
    item: TokenStream,
    /// The constant of the literal keys, declared in the block that decides
    /// an attempt, or nothing.
    scoped_item: TokenStream,
    /// A `&Policy` inside that block (the local of `policy = EXPR`, or the
    /// constant); outside it, see [`Generator::policy_outside`].
    scoped: TokenStream,
    /// With literal keys, whether they set `max_elapsed` (known here, so
    /// the loop's start need not ask the policy).
    literal_deadline: Option<bool>,
}

/// The [`PolicyBinding`] of the keys: `full` and `private` are the runtime's
/// paths outside and inside the block that decides an attempt.
fn policy_binding(args: &Args, full: &TokenStream, private: &TokenStream) -> PolicyBinding {
    match args.policy.as_ref().map(|policy| &policy.value) {
        Some(expr) => {
            let policy = local("policy");
            // Spanned on the user's expression, so a type error points there.
            let value = quote_spanned!(expr.span()=> &(#expr));
            PolicyBinding {
                item: quote!(let #policy: &#full::Policy = #value;),
                scoped_item: TokenStream::new(),
                scoped: quote!(#policy),
                literal_deadline: None,
            }
        }
        None => {
            let policy = local("POLICY");
            let scoped_value = policy_expr(args, private);
            PolicyBinding {
                item: TokenStream::new(),
                scoped_item: quote!(const #policy: &#private::Policy = &#scoped_value;),
                scoped: quote!(#policy),
                literal_deadline: Some(args.max_elapsed.is_some()),
            }
        }
    }
}

/// The budget's binding and the expression of an `Option<&RetryBudget>` that
/// the loop uses: the user's `budget = EXPR` evaluated once per call (any
/// `RetryBudget` or reference to one), or `None`.
fn budget_binding(args: &Args, private: &TokenStream) -> (TokenStream, TokenStream) {
    // Named inside and outside the block that decides an attempt: `core`'s paths.
    let krate = args.runtime_crate();
    match args.budget.as_ref().map(|budget| &budget.value) {
        Some(expr) => {
            let budget = local_at("budget", expr.span());
            let budget_of = respan(quote!(#private::budget_of), expr.span());
            let reads_clock = respan(quote!(#krate::RetryLimit::reads_clock), expr.span());
            let shared = shared_check(expr);
            // Bound first, so a temporary the expression returns (a
            // reference from a method call) lives for the whole call.
            (
                quote! {
                    let #budget = &(#expr);
                    // The bound checked through the public trait first, on
                    // the same argument: rustc reports this error alone.
                    if false {
                        let _ = #reads_clock(#budget);
                        #shared
                    }
                    let #budget = #budget_of(#budget);
                },
                quote!(::core::option::Option::Some(#budget)),
            )
        }
        None => (TokenStream::new(), quote!(::core::option::Option::None)),
    }
}

/// The binding of `admission = EXPR`: the user's expression evaluated once
/// per call and borrowed (checked through the public trait on its span), or
/// nothing.
fn admission_binding(args: &Args, private: &TokenStream) -> TokenStream {
    let krate = args.runtime_crate();
    let Some(expr) = args.admission.as_ref().map(|admission| &admission.value) else {
        return TokenStream::new();
    };
    let limit = local("admission_limit");
    let limit_at = local_at("admission_limit", expr.span());
    let admission_of = respan(quote!(#private::admission_of), expr.span());
    let observed = respan(quote!(#krate::AdmissionLimit::observed), expr.span());
    let shared = shared_check(expr);
    quote! {
        let #limit_at = &(#expr);
        if false {
            #observed(#limit_at, ::std::time::Instant::now(), false);
            #shared
        }
        let #limit = #admission_of(#limit_at);
    }
}

/// For a limit named by a bare path (`budget = BUDGET`, `admission =
/// LIMITER`): the path must be a place, a `static` or a variable, never a
/// `const`. A `const` is a new limit at each use, so it would share and
/// limit nothing. rustc rejects `addr_of!` of a `const` (E0745, "cannot
/// take address of a temporary") on the user's token. Checked in dead
/// code: it costs nothing at run time.
fn shared_check(expr: &syn::Expr) -> TokenStream {
    match expr {
        syn::Expr::Path(path) if path.qself.is_none() => {
            quote_spanned!(expr.span()=> let _ = ::core::ptr::addr_of!(#expr);)
        }
        _ => TokenStream::new(),
    }
}

/// `Policy::new().max_retries(..)...` with only the keys the user wrote.
fn policy_expr(args: &Args, private: &TokenStream) -> TokenStream {
    let mut policy = quote!(#private::Policy::new());
    if let Some(WithSpan { value: n, .. }) = args.max_retries {
        let n = proc_macro2::Literal::u32_unsuffixed(n);
        policy.extend(quote!(.max_retries(#n)));
    }
    if let Some(WithSpan { value: d, .. }) = args.initial_backoff {
        let d = duration_tokens(d, private);
        policy.extend(quote!(.initial_backoff(#d)));
    }
    if let Some(WithSpan { value: d, .. }) = args.max_backoff {
        let d = duration_tokens(d, private);
        policy.extend(quote!(.max_backoff(#d)));
    }
    if let Some(WithSpan { value: m, .. }) = args.multiplier {
        let m = proc_macro2::Literal::f64_suffixed(m);
        policy.extend(quote!(.multiplier(#m)));
    }
    if let Some(WithSpan { value: jitter, .. }) = args.jitter {
        let jitter = match jitter {
            JitterArg::Additive => quote!(#private::Jitter::Additive),
            JitterArg::AdditiveUpTo(d) => {
                let d = duration_tokens(d, private);
                quote!(#private::Jitter::AdditiveUpTo(#d))
            }
            JitterArg::Full => quote!(#private::Jitter::Full),
            JitterArg::Equal => quote!(#private::Jitter::Equal),
            JitterArg::Decorrelated => quote!(#private::Jitter::Decorrelated),
            JitterArg::Grpc => quote!(#private::Jitter::Grpc),
            JitterArg::None => quote!(#private::Jitter::None),
        };
        policy.extend(quote!(.jitter(#jitter)));
    }
    if let Some(WithSpan { value: d, .. }) = args.max_elapsed {
        let d = duration_tokens(d, private);
        policy.extend(quote!(.max_elapsed(#d)));
    }
    if let Some(WithSpan { value: rule, .. }) = args.hint_above_cap {
        let rule = match rule {
            HintArg::Stop => quote!(#private::HintAboveCap::Stop),
            HintArg::Cap => quote!(#private::HintAboveCap::WaitCap),
        };
        policy.extend(quote!(.hint_above_cap(#rule)));
    }
    policy
}

/// The exact value as the shortest of `Duration::from_secs`, `from_millis`,
/// `from_micros` and `Duration::new(secs, nanos)`.
fn duration_tokens(d: core::time::Duration, private: &TokenStream) -> TokenStream {
    let unsuffixed = proc_macro2::Literal::u64_unsuffixed;
    let secs = d.as_secs();
    let nanos = d.subsec_nanos();
    if nanos == 0 {
        let secs = unsuffixed(secs);
        return quote!(#private::Duration::from_secs(#secs));
    }
    for (per_second, unit) in [(1_000_u64, "from_millis"), (1_000_000, "from_micros")] {
        let per_unit = u32::try_from(1_000_000_000 / per_second).unwrap_or(1);
        if nanos % per_unit == 0 {
            if let Some(whole) = secs
                .checked_mul(per_second)
                .and_then(|s| s.checked_add(u64::from(nanos / per_unit)))
            {
                let whole = unsuffixed(whole);
                let unit = Ident::new(unit, Span::call_site());
                return quote!(#private::Duration::#unit(#whole));
            }
        }
    }
    let secs = unsuffixed(secs);
    let nanos = proc_macro2::Literal::u32_unsuffixed(nanos);
    quote!(#private::Duration::new(#secs, #nanos))
}

impl Args {
    /// The path to the runtime crate: `::backoff_runtime` unless `crate = "..."`.
    fn runtime_crate(&self) -> syn::Path {
        match &self.krate {
            Some(krate) => krate.value.clone(),
            None => syn::parse_quote!(::backoff_runtime),
        }
    }

    /// Whether every hook, the sleep, the policy and the budget are plain
    /// paths that name none of the function's arguments (`arguments`), so
    /// cannot read them: the body's closure may then own them.
    fn captures_nothing_besides_the_body(&self, arguments: &[Ident]) -> bool {
        [
            &self.retry_if,
            &self.retry_after,
            &self.retry_if_ok,
            &self.retry_after_ok,
            &self.pending_error,
            &self.on_retry,
            &self.on_give_up,
            &self.on_success,
            &self.before_retry,
            &self.sleep,
            &self.policy,
            &self.budget,
            &self.admission,
            &self.throttled_if,
        ]
        .into_iter()
        .flatten()
        .all(|expr| match &expr.value {
            syn::Expr::Path(path) => {
                path.qself.is_some()
                    || path.path.leading_colon.is_some()
                    || path
                        .path
                        .segments
                        .first()
                        .is_none_or(|first| !arguments.contains(&first.ident))
            }
            _ => false,
        })
    }

    /// Whether a hook (or the attempt's context) needs the start instant
    /// read before the first attempt.
    fn needs_start(&self) -> bool {
        self.on_retry.is_some()
            || self.on_give_up.is_some()
            || self.on_success.is_some()
            || self.before_retry.is_some()
            || self.context.is_some()
    }
}
