//! The `openai` embedder: the upstream server's `POST {base}/embeddings`, in batches.

use super::{EmbedError, EmbedFuture, Embedder, normalize};
use crate::llm::LlmClient;

/// Inputs per upstream request.
const BATCH: usize = 64;

pub struct OpenAiEmbedder {
    llm: LlmClient,
    id: String,
}

impl OpenAiEmbedder {
    pub fn new(llm: LlmClient) -> Self {
        let id = format!("openai:{}", llm.embedding_model());
        Self { llm, id }
    }
}

impl Embedder for OpenAiEmbedder {
    fn id(&self) -> &str {
        &self.id
    }

    fn embed(&self, texts: Vec<String>) -> EmbedFuture {
        let llm = self.llm.clone();
        let id = self.id.clone();
        Box::pin(async move {
            let mut out = Vec::with_capacity(texts.len());
            for batch in texts.chunks(BATCH) {
                let vectors = llm.embeddings(batch).await.map_err(|err| {
                    // A transport failure's cause names the upstream's address: documents and
                    // tool results that show this error get the summary. What an answer that
                    // could not be used held is the server's output, and says what to fix.
                    tracing::warn!(embedder = %id, error = %err, "the embedding request failed");
                    let said = match &err {
                        crate::llm::LlmError::InvalidResponse(detail) => {
                            format!("{}: {detail}", err.public_message())
                        }
                        _ => err.public_message(),
                    };
                    EmbedError::Upstream(format!("the embedder {id} failed: {said}"))
                })?;
                out.extend(vectors.into_iter().map(|mut v| {
                    normalize(&mut v);
                    v
                }));
            }
            Ok(out)
        })
    }
}
