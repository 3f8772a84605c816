//! Code generation.
//!
//! The validated arguments and the function become a retry
//! loop around the function's own body.
//!
//! The body's tokens appear exactly once, run in place per attempt: sync
//! bodies in a non-`move` closure (called once inline; only on failure handed
//! to the runtime's `#[cold]` loop), async bodies in a non-`move` async block
//! inside a loop that stays in the function. Both start with the "fake return
//! edge" of tracing-attributes, which gives the block the function's return
//! type so `?` conversions and coercions work as in the plain function.

use proc_macro2::{Ident, Span, TokenStream};
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::visit_mut::VisitMut;
use syn::{ReturnType, Type};

use crate::args::{Args, WithSpan};
use crate::item::{FnFacts, RetryFn};
use crate::values::{HintArg, JitterArg, NestedArg};

mod async_loop;
mod bindings;
mod hedged;
mod return_type;
mod sync_in_function;
mod sync_loop;

use self::bindings::*;
use self::return_type::*;

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

/// Tokens the expansion writes many times (the runtime's paths), kept as
/// trees: each use pushes them onto the output, where interpolating a
/// `TokenStream` joins two streams across the proc-macro bridge, which the
/// macro (built unoptimised, as cargo builds proc macros) pays for per use.
pub(crate) struct Trees(Vec<proc_macro2::TokenTree>);

impl Trees {
    /// The trees of `tokens`.
    pub(crate) fn of(tokens: TokenStream) -> Trees {
        Trees(tokens.into_iter().collect())
    }

    /// One name: a tree made here, where [`of`](Self::of) would read a
    /// stream back across the bridge.
    pub(crate) fn ident(ident: &Ident) -> Trees {
        Trees(vec![proc_macro2::TokenTree::Ident(ident.clone())])
    }

    /// These trees given `span` outright, as [`respan_exactly`] gives it,
    /// without sending a stream across the bridge and back: for paths
    /// (no groups) written many times.
    pub(crate) fn at(&self, span: Span) -> Trees {
        Trees(
            self.0
                .iter()
                .map(|tree| {
                    let mut tree = tree.clone();
                    tree.set_span(span);
                    tree
                })
                .collect(),
        )
    }
}

impl quote::ToTokens for Trees {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        tokens.extend(self.0.iter().cloned());
    }
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

/// Whether the runtime has a default timer (its `tokio` or `futures-timer`
/// feature turns on this crate's `default-timer`): only without one does an
/// async loop with no `sleep = ...` need the check whose error says so.
const HAS_DEFAULT_TIMER: bool = cfg!(feature = "default-timer");

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
        tokens,
        facts,
    } = function;
    let krate = args.runtime_crate();
    // The runtime's expansion paths: in full where the user's body is in
    // scope (the body, the attempt, what comes before the loop); after an
    // attempt, in the block that decides it (which holds none of the body's
    // tokens), under one short name that block imports, with the items it
    // needs (see `decision_items`): no item of the expansion is in scope of
    // the body, so none shadows a user item.
    let full = Trees::of(quote!(#krate::__private));
    let private = Trees::ident(&Ident::new("__backoff_rt", Span::call_site()));
    // Each attempt starts from the caller's values of `mut` arguments.
    let arguments = crate::fresh::argument_names(&sig);
    let fresh_args = crate::fresh::strip_mut_args(&mut sig, &full);
    let policy = policy_binding(args, &full, &private);
    let (budget_item, budget) = budget_binding(args, &full);
    let attempts = local("attempts");
    let (site_item, site) = site_item(args, &private, &sig.ident, sig.receiver().is_some());
    let mut generator = Generator {
        return_type: NamedReturn::of(&sig.output),
        args,
        private: &private,
        full: &full,
        policy: &policy,
        budget: &budget,
        site,
        decision_items: decision_items(&krate, &private, &policy, site_item),
        needs_start: args.needs_start(),
        return_span: return_span(&sig),
        attempts: args.context.is_some().then_some(&attempts),
        arguments: &arguments,
        fresh_args,
        context: context_binding(args, &krate, &attempts),
    };
    let retry_loop = generator.function_loop(stmts, tokens, &facts, brace.span.join(), &sig.ident);
    let items = items_before_loop(args, &full, &policy, budget_item);
    let mut block = TokenStream::new();
    brace.surround(&mut block, |out| {
        out.extend(quote! {
            #(#inner_attrs)*
            #items
            #retry_loop
        });
    });
    quote! {
        #(#attrs)*
        #vis #defaultness #sig #block
    }
}

/// Where the expansion reports what concerns the result: the return type,
/// or the function's name. Mixed-site hygiene, so the generated locals
/// spanned here stay invisible to the body; the result check and the
/// loop's calls carry exactly this span (see `respan_exactly`).
fn return_span(sig: &syn::Signature) -> Span {
    let return_span = match &sig.output {
        ReturnType::Type(_, ty) => ty.span(),
        ReturnType::Default => sig.ident.span(),
    };
    Span::mixed_site().located_at(return_span)
}

/// `let attempt: Attempt = ...;` with the user's name (`context = ...`):
/// visible in the body.
fn context_binding(args: &Args, krate: &syn::Path, attempts: &Ident) -> Option<TokenStream> {
    args.context.as_ref().map(|context| {
        let name = &context.value;
        quote! { let #name: #krate::Attempt = #attempts.next_attempt(); }
    })
}

/// The items the block that decides an attempt declares first: the import
/// of `__backoff_rt`, the policy's constant, the site's static, and the
/// probe's traits (in scope where an attempt is decided, never in the
/// body's, whose method calls they would change).
fn decision_items(krate: &syn::Path, private: &Trees, policy: &PolicyBinding, site_item: TokenStream) -> TokenStream {
    let probe_traits = REPORTS_WHAT_FAILED.then(|| {
        quote! {
            #[allow(unused_imports)]
            use #private::probe::{ProbeBoth as _, ProbeConventions as _, ProbeDebug as _, ProbeNeither as _};
        }
    });
    let scoped_policy = &policy.scoped_item;
    quote! {
        use #krate::__private as __backoff_rt;
        #scoped_policy
        #site_item
        #probe_traits
    }
}

/// What the function binds before its loop: the policy (`policy = EXPR`),
/// the budget and the admission limiter. A hedged call binds its budget
/// and limiter for the builder instead.
fn items_before_loop(args: &Args, full: &Trees, policy: &PolicyBinding, budget_item: TokenStream) -> TokenStream {
    let policy_item = &policy.item;
    if args.hedge_after.is_some() {
        return quote!(#policy_item);
    }
    let admission_item = admission_binding(args, full);
    quote! {
        #policy_item
        #budget_item
        #admission_item
    }
}

/// Whether the runtime was built with its `chaos` feature (which turns on
/// this crate's): `chaos = ...` then expands onto its injector.
const HAS_CHAOS: bool = cfg!(feature = "chaos");

/// The body of one attempt under `chaos = INJECTOR`, innermost: the body's
/// own block (its `return` ends the attempt) run by the injector, which may
/// return an injected result instead or wait first. Unchanged without the
/// key. Without the runtime's `chaos` feature, an error on the key.
fn under_injector(args: &Args, full: &Trees, body: TokenStream, is_async: bool) -> TokenStream {
    let Some(chaos) = &args.chaos else {
        return body;
    };
    let expr = &chaos.value;
    if !HAS_CHAOS {
        let message = "`chaos = ...` needs the `chaos` feature of backoff-runtime: \
                       `backoff-runtime = { version = \"0.1\", features = [\"chaos\"] }`";
        let error = quote_spanned!(chaos.key_span=> ::core::compile_error!(#message););
        return quote!(#error #body);
    }
    let shared = self::bindings::shared_check(expr);
    let injector = local_at("injector", expr.span());
    // The attempt's block is spanned on the injector: an injector of other
    // `Ok` or error types than the function's is reported there.
    if is_async {
        let attempt = respan(quote!(#full::Injector::attempt), expr.span());
        let block = quote_spanned!(expr.span()=> async { #body });
        quote! {
            let #injector = &(#expr);
            if false { #shared }
            #attempt(#injector, #block).await
        }
    } else {
        let blocking = respan(quote!(#full::Injector::blocking), expr.span());
        let block = quote_spanned!(expr.span()=> || { #body });
        quote! {
            let #injector = &(#expr);
            if false { #shared }
            #blocking(#injector, #block)
        }
    }
}

/// What the two loop shapes share: the arguments, the policy and the
/// hooks of one function.
struct Generator<'a> {
    /// The return type, as the expansion writes it.
    return_type: NamedReturn,
    args: &'a Args,
    /// The runtime's expansion paths inside the block that decides an
    /// attempt, which imports them (`__backoff_rt`).
    private: &'a Trees,
    /// The same paths in full, for everything outside that block.
    full: &'a Trees,
    policy: &'a PolicyBinding,
    /// `Some(&RetryBudget)` or `None`.
    budget: &'a Trees,
    /// The function's site, as `Site` (see [`site_item`]).
    site: Trees,
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
    /// The caller's values of `mut` arguments, bound again per attempt.
    fresh_args: TokenStream,
    /// The binding of the attempt's context, with `context = ...`.
    context: Option<TokenStream>,
}

impl Generator<'_> {
    /// The function's loop, after its result check; in an
    /// `#[async_trait]` method, inside the block that crate wrote.
    fn function_loop(
        &mut self,
        mut stmts: Vec<syn::Stmt>,
        tokens: Option<TokenStream>,
        facts: &FnFacts,
        brace_span: Span,
        ident: &Ident,
    ) -> TokenStream {
        if facts.is_async_trait {
            if let Some(rewritten) = self.async_trait_loop(&mut stmts) {
                return rewritten;
            }
        }
        let written = tokens.unwrap_or_else(|| quote!(#(#stmts)*));
        let body = self.attempt_body(
            brace_span,
            &TokenStream::new(),
            written,
            facts.is_async || facts.is_async_trait,
        );
        let check = result_check(self.full, &self.return_type, self.return_span);
        let retry_loop = if self.args.hedge_after.is_some() {
            self.hedged(body, ident)
        } else if facts.is_async {
            self.async_loop(body)
        } else {
            self.sync_loop(body, brace_span)
        };
        quote!(#check #retry_loop)
    }

    /// `#[async_trait]` already turned the method into
    /// `Box::pin(async move { ...; let __ret: R = { body }; __ret })`:
    /// `body` is retried inside that block (its argument moves run once).
    /// The statements so rewritten, or `None` without that block.
    fn async_trait_loop(&mut self, stmts: &mut [syn::Stmt]) -> Option<TokenStream> {
        let block = crate::item::async_trait_block(stmts)?;
        // `mut` arguments that `#[async_trait]` moved into its block.
        let moved_fresh = crate::fresh::strip_async_trait_rebinds(&mut block.stmts, self.full);
        let (ret_type, user_block) = crate::item::async_trait_ret(block)?;
        self.return_type = NamedReturn::of(&ReturnType::Type(Default::default(), Box::new(ret_type)));
        let check = result_check(self.full, &self.return_type, self.return_span);
        let user_stmts = &user_block.stmts;
        let written = quote!(#(#user_stmts)*);
        let body = self.attempt_body(user_block.brace_token.span.join(), &moved_fresh, written, true);
        let loop_tokens = self.async_loop(body);
        *user_block = syn::parse_quote!({ #check #loop_tokens });
        Some(quote!(#(#stmts)*))
    }

    /// One attempt's body, spanned on the body's braces: the fake return
    /// edge of the function's return type, the caller's values of `mut`
    /// arguments (and of those `#[async_trait]` `moved`), the attempt's
    /// context, then the `written` statements; run by the injector with
    /// `chaos = ...`.
    fn attempt_body(&self, braces: Span, moved: &TokenStream, written: TokenStream, is_async: bool) -> TokenStream {
        let Generator {
            fresh_args, context, ..
        } = self;
        let edge = fake_return_edge(&self.return_type, self.full);
        let body = quote_spanned! {braces=>
            #edge
            #fresh_args
            #moved
            #context
            #written
        };
        under_injector(self.args, self.full, body, is_async)
    }

    /// `RetryResult::into_result(value)`, spanned exactly on the return
    /// type: a function that returns no `Result` is reported once, by the
    /// result check, whose error this one duplicates.
    fn as_plain_result(&self, value: &Ident) -> TokenStream {
        let span = self.return_span;
        let private = self.private.at(span);
        // The call and its argument (a local of the expansion, which keeps
        // its hygiene: the return span is mixed-site too).
        let mut value = value.clone();
        value.set_span(span);
        quote_spanned!(span=> #private::RetryResult::into_result(#value))
    }

    /// `RetryResult::from_result(result)`, spanned as [`as_plain_result`](Self::as_plain_result).
    fn returned_result(&self, result: TokenStream) -> TokenStream {
        let span = self.return_span;
        let private = self.private.at(span);
        let path = quote_spanned!(span=> #private::RetryResult::from_result);
        quote!(#path(#result))
    }

    /// The hooks lent to the loop where an attempt is decided, typed by
    /// `seed` (a `Hooks::for_error(&error, site)` or `Hooks::for_result(&result, site)`
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
        let mut chain = quote!(#private::Hooks::#seed);
        let args = self.args;
        for (method, hook) in args.hooks() {
            if method == "on_success" && !with_on_success {
                continue;
            }
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
        quote!(#chain.report_with((&&&&#private::probe::Probe::of(#seen)).report()))
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
        let site = &self.site;
        match &self.args.retry_if_ok {
            Some(WithSpan { value: retry_if_ok, .. }) => {
                let judge = local("judge");
                let lent = quote_spanned!(retry_if_ok.span()=> &(#retry_if_ok));
                (
                    quote!(#private::judged(#result, #lent)),
                    quote!(#private::Judged::Done(#value)),
                    quote!(#private::Judged::Again(#failed, #judge)),
                    self.hooks_judged_by(
                        quote!(for_result(&#failed, #site)),
                        &quote!(&#failed),
                        false,
                        Some(&judge),
                    ),
                )
            }
            None => (
                result,
                quote!(#private::Ok(#value)),
                quote!(#private::Err(#failed)),
                self.hooks(quote!(for_error(&#failed, #site)), &quote!(&#failed), false),
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
                quote!(#private::Admitting::succeeded(&mut #admitting);),
                quote!(#private::Loop::failed_admitting),
                quote!(&mut #admitting,),
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
            let policy = &self.policy.scoped;
            return quote!(#policy);
        }
        let full = self.full;
        let value = policy_expr(self.args, full);
        quote!(const { &#value })
    }

    /// Whether the expansion knows that nothing reads the call's start:
    /// literal keys without `max_elapsed`, no budget, no hook that reads
    /// it. The loop then asks nothing (one call less for rustc in every
    /// function).
    fn start_unread(&self) -> bool {
        self.policy.literal_deadline == Some(false) && !self.needs_start && self.args.budget.is_none()
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
        if self.start_unread() {
            return quote!(#full::Loop::unstarted(#clock));
        }
        // With a budget and no admission limiter, the first attempt is sent
        // in the poll that starts the loop: the budget counts the call at
        // once (else at its first answer).
        let sent = self.args.budget.is_some() && self.args.admission.is_none();
        match self.policy.literal_deadline {
            Some(deadline) => {
                let reads_start = *needs_start || deadline;
                if sent {
                    quote!(#full::Loop::start_sent(#clock, #full::None, #budget, #reads_start))
                } else {
                    quote!(#full::Loop::start(#clock, #full::None, #budget, #reads_start))
                }
            }
            None => {
                let policy = &self.policy.scoped;
                if sent {
                    quote!(#full::Loop::start_sent(#clock, #full::Some(#policy), #budget, #needs_start))
                } else {
                    quote!(#full::Loop::start(#clock, #full::Some(#policy), #budget, #needs_start))
                }
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
        let site = &self.site;
        let seed = if self.args.retry_if_ok.is_some() {
            quote!(for_result(#next.outcome(), #site))
        } else {
            quote!(for_error(#next.outcome(), #site))
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

    /// A loop that stays in the function: its `state` made from
    /// `loop_state`, the `locals` it needs (the admitting, the attempt's
    /// context), then each `attempt` bound to `result` and `below` and
    /// followed by `after`, the decision and the wait.
    fn looped(
        &self,
        (state, loop_state): (&Ident, TokenStream),
        locals: [TokenStream; 2],
        (result, below, attempt): (&Ident, &Ident, TokenStream),
        after: TokenStream,
    ) -> TokenStream {
        let [admitting_value, attempts_value] = locals;
        quote! {
            let mut #state = #loop_state;
            #admitting_value
            #attempts_value
            loop {
                let (#result, #below) = #attempt;
                #after
            }
        }
    }

    /// The attempt's context (`context = ...`), made from the loop's
    /// `state` before the first attempt.
    fn attempts_value(&self, state: &Ident) -> Option<TokenStream> {
        self.attempts.map(|attempts| {
            let policy = self.policy_outside();
            quote!(let mut #attempts = #state.attempts(#policy);)
        })
    }

    /// With `admission = ...`: the check that the error type absorbs
    /// `Refused`, the call's `Admitting` on `clock`, and `attempt` run only
    /// when `admitted` (an expression of the `Admitting`) says so; a refused
    /// attempt is the result `E::from(Refused)`. Without it: `attempt` alone.
    fn admitted(
        &self,
        clock: TokenStream,
        admitted: impl FnOnce(&Ident) -> TokenStream,
        attempt: TokenStream,
    ) -> (TokenStream, TokenStream, TokenStream) {
        let Some(admitting) = self.admission() else {
            return (TokenStream::new(), TokenStream::new(), attempt);
        };
        let (check, refused) = self.refusal_result();
        let limit = local("admission_limit");
        let full = self.full;
        let admitted = admitted(&admitting);
        (
            check,
            quote!(let mut #admitting = #full::Admitting::of_dyn(#limit, #clock);),
            quote! {
                if #admitted {
                    #attempt
                } else {
                    (#refused(#admitting.refusal()), false)
                }
            },
        )
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
        let return_type = &self.return_type.erased;
        let check = if self.return_type.infers {
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
