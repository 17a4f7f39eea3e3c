//! tablecam's build script for zmq-sys: link the system libzmq (Debian's libzmq5 4.3.4 is built
//! with libsodium, so CURVE works) instead of compiling the bundled copy, which upstream zmq-sys
//! 0.12 always builds without libsodium.
//!
//! Environment:
//!   LIBZMQ_NO_PKG_CONFIG=1 with LIBZMQ_LIB_DIR=DIR  link `-lzmq` from DIR without pkg-config.

use std::env;

/// The oldest libzmq whose ABI these bindings describe (zmq-sys' own `system-deps` minimum).
const MIN_VERSION: &str = "4.1";

fn main() {
    println!("cargo:rerun-if-changed=build/main.rs");
    println!("cargo:rerun-if-env-changed=LIBZMQ_NO_PKG_CONFIG");
    println!("cargo:rerun-if-env-changed=LIBZMQ_LIB_DIR");

    if env::var_os("LIBZMQ_NO_PKG_CONFIG").is_some() {
        if let Some(dir) = env::var_os("LIBZMQ_LIB_DIR") {
            println!("cargo:rustc-link-search=native={}", dir.to_string_lossy());
        }
        println!("cargo:rustc-link-lib=dylib=zmq");
        return;
    }

    match pkg_config::Config::new().atleast_version(MIN_VERSION).probe("libzmq") {
        Ok(lib) => {
            // Dependent crates can read these as DEP_ZMQ_INCLUDE / DEP_ZMQ_VERSION.
            for dir in &lib.include_paths {
                println!("cargo:include={}", dir.display());
            }
            println!("cargo:version={}", lib.version);
        }
        Err(err) => panic!(
            "zmq-sys (vendor/zmq-sys): libzmq >= {} not found through pkg-config: {}\n\
             Install Debian's libzmq3-dev (`make setup` does), or set LIBZMQ_NO_PKG_CONFIG=1 and \
             LIBZMQ_LIB_DIR to a directory holding libzmq.so.",
            MIN_VERSION, err
        ),
    }
}
