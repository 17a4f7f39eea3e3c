pub use std::os::unix::io::RawFd;
