//! [`Sending`]: one attempt's send, as the call's phases poll it.

use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll, ready};

use tower_service::Service;

pin_project_lite::pin_project! {
    /// One attempt's send: the first is called at once (by
    /// `RetryService::call`, on the service `poll_ready` made ready); each
    /// resend owns a clone of the service, made ready before it is called
    /// (tower's rule for a service used more than once), so its readiness
    /// counts toward the per-attempt timeout as the call does.
    #[project = SendingProj]
    pub(super) enum Sending<S, Req, F> {
        /// The inner service was called: its future.
        Called { #[pin] response: F },
        /// A clone of the service, being made ready for `request`.
        Readying { service: S, request: Option<Req> },
    }
}

impl<S, Req, F> Future for Sending<S, Req, F>
where
    S: Service<Req, Future = F>,
    F: Future<Output = Result<S::Response, S::Error>>,
{
    type Output = F::Output;

    #[inline]
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        loop {
            match self.as_mut().project() {
                SendingProj::Called { response } => return response.poll(cx),
                SendingProj::Readying { service, request } => {
                    ready!(service.poll_ready(cx))?;
                    // Taken once: the phase changes to `Called` below.
                    let Some(request) = request.take() else {
                        return Poll::Pending;
                    };
                    let response = service.call(request);
                    self.set(Sending::Called { response });
                }
            }
        }
    }
}
