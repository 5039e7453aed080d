//! A store that runs a test's code at one chosen request: after the first put whose path a
//! predicate accepts, the put's answer waits for the test's future (another writer's commit, a
//! maintenance run), so that a race is played in one exact order instead of hoped for.

use std::fmt;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use futures::future::BoxFuture;
use futures::stream::BoxStream;
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore, PutMultipartOptions,
    PutOptions, PutPayload, PutResult, RenameOptions, Result,
};

/// What runs once: the predicate on the put's path, and the future the put then waits for.
type Hook = (Box<dyn Fn(&Path) -> bool + Send + Sync>, BoxFuture<'static, ()>);

/// Wraps `inner`: the first successful put of a path that `when` accepts waits for `then`
/// before it answers. Every other request passes through unchanged.
pub fn after_put(
    inner: Arc<dyn ObjectStore>,
    when: impl Fn(&Path) -> bool + Send + Sync + 'static,
    then: BoxFuture<'static, ()>,
) -> Arc<dyn ObjectStore> {
    Arc::new(HookStore {
        inner,
        hook: Mutex::new(Some((Box::new(when), then))),
    })
}

struct HookStore {
    inner: Arc<dyn ObjectStore>,
    hook: Mutex<Option<Hook>>,
}

impl fmt::Debug for HookStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Hook({})", self.inner)
    }
}

impl fmt::Display for HookStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Hook({})", self.inner)
    }
}

#[async_trait]
impl ObjectStore for HookStore {
    async fn put_opts(&self, location: &Path, payload: PutPayload, opts: PutOptions) -> Result<PutResult> {
        let r = self.inner.put_opts(location, payload, opts).await?;
        let fire = {
            let mut hook = self.hook.lock().unwrap();
            match hook.as_ref() {
                Some((when, _)) if when(location) => hook.take().map(|(_, then)| then),
                _ => None,
            }
        };
        if let Some(then) = fire {
            then.await;
        }
        Ok(r)
    }

    async fn put_multipart_opts(&self, location: &Path, opts: PutMultipartOptions) -> Result<Box<dyn MultipartUpload>> {
        self.inner.put_multipart_opts(location, opts).await
    }

    async fn get_opts(&self, location: &Path, options: GetOptions) -> Result<GetResult> {
        self.inner.get_opts(location, options).await
    }

    fn delete_stream(&self, locations: BoxStream<'static, Result<Path>>) -> BoxStream<'static, Result<Path>> {
        self.inner.delete_stream(locations)
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, Result<ObjectMeta>> {
        self.inner.list(prefix)
    }

    fn list_with_offset(&self, prefix: Option<&Path>, offset: &Path) -> BoxStream<'static, Result<ObjectMeta>> {
        self.inner.list_with_offset(prefix, offset)
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> Result<ListResult> {
        self.inner.list_with_delimiter(prefix).await
    }

    async fn copy_opts(&self, from: &Path, to: &Path, options: CopyOptions) -> Result<()> {
        self.inner.copy_opts(from, to, options).await
    }

    async fn rename_opts(&self, from: &Path, to: &Path, options: RenameOptions) -> Result<()> {
        self.inner.rename_opts(from, to, options).await
    }
}
