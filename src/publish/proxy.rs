//! The XSUB/XPUB proxy: several pipeline processes publish into one stream.
//!
//! Publishers connect to the proxy's frontend (XSUB), subscribers to its backend (XPUB);
//! subscriptions flow upstream, so each publisher only sends what some subscriber wants.
use std::collections::BTreeMap;
use std::thread::JoinHandle;

use super::keys::{Security, ZapHandler};
use super::{Attach, PublishError, PUBLISHERS_ZAP_DOMAIN, SUBSCRIBERS_ZAP_DOMAIN};

/// Proxy settings.
#[derive(Debug, Clone)]
pub struct ProxyConfig {
    /// Endpoint the publishers connect to (XSUB, bound).
    pub frontend: String,
    /// Endpoint the subscribers connect to (XPUB, bound).
    pub backend: String,
    /// Security of the frontend (CURVE server: the publishers' keys as `allowed_clients`).
    pub frontend_security: Security,
    /// Security of the backend (CURVE server: the subscribers' keys as `allowed_clients`).
    pub backend_security: Security,
    /// High-water mark of both sockets, messages (per peer).
    pub hwm: i32,
}

/// The proxy's sockets, bound and ready to run.
struct Bound {
    frontend: zmq::Socket,
    backend: zmq::Socket,
    frontend_endpoint: String,
    backend_endpoint: String,
    zap: Option<ZapHandler>,
}

fn bind(context: &zmq::Context, config: &ProxyConfig) -> Result<Bound, PublishError> {
    let mut domains = BTreeMap::new();
    if let Some(keys) = config.frontend_security.allow_list() {
        domains.insert(PUBLISHERS_ZAP_DOMAIN.to_owned(), keys.clone());
    }
    if let Some(keys) = config.backend_security.allow_list() {
        domains.insert(SUBSCRIBERS_ZAP_DOMAIN.to_owned(), keys.clone());
    }
    let zap = if domains.is_empty() { None } else { Some(ZapHandler::start(context, domains)?) };
    let opt = |what| move |source| PublishError::Zmq { what, source };
    let frontend = context.socket(zmq::XSUB).map_err(opt("create the proxy's XSUB socket"))?;
    let backend = context.socket(zmq::XPUB).map_err(opt("create the proxy's XPUB socket"))?;
    for socket in [&frontend, &backend] {
        socket.set_sndhwm(config.hwm).map_err(opt("set the send high-water mark"))?;
        socket.set_rcvhwm(config.hwm).map_err(opt("set the receive high-water mark"))?;
        socket.set_linger(0).map_err(opt("set linger"))?;
    }
    config.frontend_security.apply(&frontend, PUBLISHERS_ZAP_DOMAIN)?;
    config.backend_security.apply(&backend, SUBSCRIBERS_ZAP_DOMAIN)?;
    let frontend_endpoint = Attach::Bind.attach(&frontend, &config.frontend)?;
    let backend_endpoint = Attach::Bind.attach(&backend, &config.backend)?;
    Ok(Bound { frontend, backend, frontend_endpoint, backend_endpoint, zap })
}

/// Runs the proxy in this thread until the process ends (`tablecam proxy`). `on_ready` is called
/// with the bound frontend and backend endpoints once both are bound.
pub fn run_proxy(config: &ProxyConfig, on_ready: impl FnOnce(&str, &str)) -> Result<(), PublishError> {
    let context = zmq::Context::new();
    let bound = bind(&context, config)?;
    on_ready(&bound.frontend_endpoint, &bound.backend_endpoint);
    let _zap = bound.zap;
    // zmq_proxy returns only when the context is terminated.
    zmq::proxy(&bound.frontend, &bound.backend).map_err(|source| PublishError::Io {
        endpoint: bound.frontend_endpoint.clone(),
        what: "run the proxy",
        source,
    })
}

/// A proxy running on its own thread (for tests and embedding); stopped on drop.
pub struct ProxyHandle {
    control: zmq::Socket,
    thread: Option<JoinHandle<()>>,
    frontend: String,
    backend: String,
    _zap: Option<ZapHandler>,
    _context: zmq::Context,
}

impl ProxyHandle {
    /// Binds both sides and starts the proxy thread.
    pub fn spawn(config: &ProxyConfig) -> Result<ProxyHandle, PublishError> {
        let context = zmq::Context::new();
        let Bound { mut frontend, mut backend, frontend_endpoint, backend_endpoint, zap } = bind(&context, config)?;
        let opt = |what| move |source| PublishError::Zmq { what, source };
        let control_endpoint = format!("inproc://tablecam-proxy-control-{}", std::process::id());
        let mut listener = context.socket(zmq::PAIR).map_err(opt("create the proxy control socket"))?;
        listener
            .bind(&control_endpoint)
            .map_err(|source| PublishError::Bind { endpoint: control_endpoint.clone(), source })?;
        let control = context.socket(zmq::PAIR).map_err(opt("create the proxy control socket"))?;
        control
            .connect(&control_endpoint)
            .map_err(|source| PublishError::Connect { endpoint: control_endpoint, source })?;
        let thread = std::thread::Builder::new()
            .name("tablecam-proxy".to_owned())
            .spawn(move || {
                // Returns after TERMINATE on the control socket.
                let _ = zmq::proxy_steerable(&mut frontend, &mut backend, &mut listener);
            })
            .map_err(|e| PublishError::Thread(e.to_string()))?;
        Ok(ProxyHandle {
            control,
            thread: Some(thread),
            frontend: frontend_endpoint,
            backend: backend_endpoint,
            _zap: zap,
            _context: context,
        })
    }

    /// The bound frontend endpoint (publishers connect here).
    pub fn frontend(&self) -> &str {
        &self.frontend
    }

    /// The bound backend endpoint (subscribers connect here).
    pub fn backend(&self) -> &str {
        &self.backend
    }
}

impl Drop for ProxyHandle {
    fn drop(&mut self) {
        let _ = self.control.send("TERMINATE", 0);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
