//! Vectors in memory. `UnitMatrix`: unit-length rows in one contiguous `ndarray` matrix, so the
//! cosine similarity of a query with every row is one matrix–vector product (eight lanes wide
//! where the CPU can) — the one such type, for document chunks and a chat's memories alike.
//! `Vectors`: the vector half of a chat's index, a `UnitMatrix` with what each row belongs to.
//! Memory only: callers reload them from the database.

use std::collections::HashMap;

use entities::ids::DocumentId;
use ndarray::{Array2, ArrayView1, ArrayView2, Axis};

use super::embed::normalize;
use super::index::IndexedChunk;

/// A query whose length is not the matrix's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the query vector has {got} dimensions; this index holds {held}-dimensional vectors")]
pub struct DimensionMismatch {
    pub got: usize,
    pub held: usize,
}

/// Unit-length rows of one length, in one row-major matrix.
#[derive(Debug, Default)]
pub struct UnitMatrix {
    /// `0 × 0` until the first row.
    matrix: Array2<f32>,
}

impl UnitMatrix {
    /// A matrix of `vectors`, each scaled to unit length (a zero vector stays zero, similar to
    /// nothing). Those of another length than the first are left out: the second value gives
    /// each input's row, `None` for those.
    pub fn from_vectors<'a>(
        vectors: impl IntoIterator<Item = &'a [f32]>,
    ) -> (Self, Vec<Option<usize>>) {
        let mut placed = Vec::new();
        let mut flat = Vec::new();
        let mut dim = None;
        let mut rows = 0;
        for vector in vectors {
            let length = *dim.get_or_insert(vector.len());
            let start = flat.len();
            flat.extend_from_slice(vector);
            if vector.len() != length {
                flat.truncate(start);
                placed.push(None);
                continue;
            }
            normalize(&mut flat[start..]);
            placed.push(Some(rows));
            rows += 1;
        }
        let mut matrix = Self::default();
        if let Some(dim) = dim {
            matrix.append(flat, dim);
        }
        (matrix, placed)
    }

    pub fn len(&self) -> usize {
        self.matrix.nrows()
    }

    pub fn is_empty(&self) -> bool {
        self.matrix.nrows() == 0
    }

    /// The rows' length; `None` before the first row.
    pub fn dimension(&self) -> Option<usize> {
        (self.matrix.nrows() > 0).then(|| self.matrix.ncols())
    }

    /// Appends whole rows of `dim` values, already unit length, given one after another.
    fn append(&mut self, flat: Vec<f32>, dim: usize) {
        if dim == 0 || flat.is_empty() {
            return;
        }
        let added = flat.len() / dim;
        // `flat` holds `added` whole rows of `dim` values, and the matrix is owned, row-major
        // and `dim` wide: neither step can fail, but a failure is logged, not a panic.
        let appended = ArrayView2::from_shape((added, dim), &flat).and_then(|new_rows| {
            if self.matrix.nrows() == 0 {
                self.matrix = new_rows.to_owned();
                Ok(())
            } else {
                self.matrix.append(Axis(0), new_rows)
            }
        });
        if let Err(err) = appended {
            tracing::error!(%err, "could not add vectors to the matrix");
        }
    }

    /// Replaces a row with a unit-length vector of the matrix's length.
    fn set_row(&mut self, row: usize, vector: &[f32]) {
        self.matrix.row_mut(row).assign(&ArrayView1::from(vector));
    }

    /// Keeps only the rows `keep`, in that order.
    fn keep_rows(&mut self, keep: &[usize]) {
        self.matrix = self.matrix.select(Axis(0), keep);
    }

    /// The cosine similarity of every row with `query`, by row; `None` when there are no rows
    /// or the query is zero (it would rank every row alike).
    pub fn similarities(&self, query: &[f32]) -> Result<Option<Vec<f32>>, DimensionMismatch> {
        let Some(dim) = self.dimension() else {
            return Ok(None);
        };
        if query.len() != dim {
            return Err(DimensionMismatch {
                got: query.len(),
                held: dim,
            });
        }
        let mut query = query.to_vec();
        if !normalize(&mut query) {
            return Ok(None);
        }
        let scores = match self.matrix.as_slice() {
            Some(flat) => dot_rows(flat, &query),
            // Not row-major (never the case for a matrix this type builds): ndarray's product.
            None => self.matrix.dot(&ArrayView1::from(&query[..])).to_vec(),
        };
        Ok(Some(scores))
    }
}

/// What a row belongs to.
pub(crate) struct Row {
    pub(crate) key: u64,
    pub(crate) document_id: DocumentId,
}

#[derive(Default)]
pub(crate) struct Vectors {
    /// One unit-length row per chunk, in `rows` order.
    matrix: UnitMatrix,
    rows: Vec<Row>,
    /// Row by chunk key.
    row_of: HashMap<u64, usize>,
}

impl Vectors {
    pub(crate) fn len(&self) -> usize {
        self.rows.len()
    }

    /// The vectors' length; `None` before the first.
    pub(crate) fn dimension(&self) -> Option<usize> {
        self.matrix.dimension()
    }

    pub(crate) fn contains(&self, key: u64) -> bool {
        self.row_of.contains_key(&key)
    }

    /// The row number of a chunk key.
    pub(crate) fn row_index(&self, key: u64) -> Option<usize> {
        self.row_of.get(&key).copied()
    }

    /// The key of the chunk in a row.
    pub(crate) fn key(&self, row: usize) -> u64 {
        self.rows[row].key
    }

    pub(crate) fn clear(&mut self) {
        *self = Self::default();
    }

    /// Appends (or, for a known chunk id, replaces) rows, normalised to unit length. Vectors
    /// whose length differs from the others' are skipped.
    pub(crate) fn push(&mut self, chunks: Vec<IndexedChunk>) {
        let Some(dim) = self
            .dimension()
            .or_else(|| chunks.first().map(|c| c.vector.len()))
        else {
            return;
        };
        let mut flat = Vec::with_capacity(chunks.len() * dim);
        for chunk in chunks {
            let mut vector = chunk.vector;
            if vector.len() != dim {
                tracing::warn!(chunk_id = %chunk.chunk_id, "vector of the wrong dimension skipped");
                continue;
            }
            normalize(&mut vector);
            let key = chunk_key(chunk.chunk_id.as_str());
            if let Some(&row) = self.row_of.get(&key) {
                self.matrix.set_row(row, &vector);
                continue;
            }
            flat.extend_from_slice(&vector);
            self.row_of.insert(key, self.rows.len());
            self.rows.push(Row {
                key,
                document_id: chunk.document_id,
            });
        }
        self.matrix.append(flat, dim);
    }

    /// Drops a document's rows, keeping the others in order.
    pub(crate) fn remove_document(&mut self, document_id: &DocumentId) {
        let keep: Vec<usize> = (0..self.rows.len())
            .filter(|&row| &self.rows[row].document_id != document_id)
            .collect();
        if keep.len() == self.rows.len() {
            return;
        }
        self.matrix.keep_rows(&keep);
        self.rows.retain(|row| &row.document_id != document_id);
        self.row_of = self
            .rows
            .iter()
            .enumerate()
            .map(|(i, row)| (row.key, i))
            .collect();
    }

    /// The cosine similarity of every row with the query, by row; `None` when there are no
    /// rows or the query vector is zero (it would rank every chunk alike).
    pub(crate) fn similarities(
        &self,
        query: &[f32],
    ) -> Result<Option<Vec<f32>>, DimensionMismatch> {
        self.matrix.similarities(query)
    }
}

/// The dot product of every `query.len()`-long row of a row-major `matrix` with `query`.
/// Searching is mostly this loop over the whole matrix (some 11 MB at the limits), so it runs
/// eight lanes wide where the CPU can.
fn dot_rows(matrix: &[f32], query: &[f32]) -> Vec<f32> {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
        // SAFETY: the CPU has just been seen to support the features the function is built for.
        return unsafe { dot_rows_avx2(matrix, query) };
    }
    dot_rows_portable(matrix, query)
}

/// `dot_rows_portable` compiled for AVX2, so its lanes become 256-bit registers.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn dot_rows_avx2(matrix: &[f32], query: &[f32]) -> Vec<f32> {
    dot_rows_portable(matrix, query)
}

#[inline(always)]
fn dot_rows_portable(matrix: &[f32], query: &[f32]) -> Vec<f32> {
    if query.is_empty() {
        return Vec::new();
    }
    matrix
        .chunks_exact(query.len())
        .map(|row| dot(row, query))
        .collect()
}

/// Sixteen independent running sums, which the compiler keeps in vector registers (a single
/// sum would make every addition wait for the previous one).
#[inline(always)]
fn dot(a: &[f32], b: &[f32]) -> f32 {
    const LANES: usize = 16;
    let (a_blocks, a_rest) = a.as_chunks::<LANES>();
    let (b_blocks, b_rest) = b.as_chunks::<LANES>();
    let mut sums = [0.0f32; LANES];
    for (x, y) in a_blocks.iter().zip(b_blocks) {
        for lane in 0..LANES {
            sums[lane] += x[lane] * y[lane];
        }
    }
    let rest: f32 = a_rest.iter().zip(b_rest).map(|(x, y)| x * y).sum();
    sums.iter().sum::<f32>() + rest
}

/// The `depth` best rows by score, best first (ties by row order).
pub(crate) fn top_rows(scores: &[f32], depth: usize) -> Vec<usize> {
    if depth == 0 {
        return Vec::new();
    }
    let by_score = |a: &usize, b: &usize| scores[*b].total_cmp(&scores[*a]).then(a.cmp(b));
    let mut rows: Vec<usize> = (0..scores.len()).collect();
    if rows.len() > depth {
        rows.select_nth_unstable_by(depth - 1, by_score);
        rows.truncate(depth);
    }
    rows.sort_unstable_by(by_score);
    rows
}

/// A chunk id's 64-bit FNV-1a hash: how the two rankings are joined without reading stored
/// documents. Two ids of one chat sharing a key (odds about 1 in 10^12 at 6,000 chunks)
/// would be confused with each other.
pub(crate) fn chunk_key(chunk_id: &str) -> u64 {
    chunk_id.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use entities::ids::ChunkId;

    use super::*;

    fn chunk(id: &str, document: &str, vector: &[f32]) -> IndexedChunk {
        IndexedChunk {
            chunk_id: ChunkId::from_string(id),
            document_id: DocumentId::from_string(document),
            filename: String::new(),
            text: String::new(),
            headings: Default::default(),
            vector: vector.to_vec(),
        }
    }

    #[test]
    fn rows_are_unit_length_and_stay_aligned_after_a_removal() {
        let mut vectors = Vectors::default();
        vectors.push(vec![
            chunk("a", "d1", &[3.0, 4.0]),
            chunk("b", "d2", &[0.0, 2.0]),
            chunk("c", "d1", &[1.0, 0.0]),
            chunk("bad", "d3", &[1.0, 0.0, 0.0]),
        ]);
        assert_eq!(vectors.len(), 3);
        let scores = vectors.similarities(&[0.0, 5.0]).unwrap().unwrap();
        assert_eq!(scores, [0.8, 1.0, 0.0]);
        vectors.remove_document(&DocumentId::from_string("d1"));
        assert_eq!(vectors.len(), 1);
        assert_eq!(vectors.row_index(chunk_key("b")), Some(0));
        assert_eq!(vectors.key(0), chunk_key("b"));
        assert_eq!(vectors.similarities(&[0.0, 1.0]).unwrap().unwrap(), [1.0]);
        assert!(vectors.similarities(&[0.0, 0.0]).unwrap().is_none());
        assert!(vectors.similarities(&[1.0]).is_err());
    }

    #[test]
    fn a_matrix_from_vectors_places_each_of_the_first_ones_length() {
        let vectors: [&[f32]; 4] = [&[3.0, 4.0], &[1.0, 2.0, 3.0], &[0.0, 0.0], &[0.0, 7.0]];
        let (matrix, placed) = UnitMatrix::from_vectors(vectors);
        assert_eq!(placed, [Some(0), None, Some(1), Some(2)]);
        assert_eq!((matrix.len(), matrix.dimension()), (3, Some(2)));
        // Unit rows: cosine similarities; the zero vector is similar to nothing.
        assert_eq!(
            matrix.similarities(&[0.0, 2.0]).unwrap().unwrap(),
            [0.8, 0.0, 1.0]
        );
        assert_eq!(
            matrix.similarities(&[1.0]),
            Err(DimensionMismatch { got: 1, held: 2 })
        );
        let (empty, placed) = UnitMatrix::from_vectors(std::iter::empty());
        assert!(empty.is_empty() && placed.is_empty());
        assert_eq!(empty.similarities(&[1.0]), Ok(None));
    }

    #[test]
    fn a_known_chunk_id_replaces_its_row() {
        let mut vectors = Vectors::default();
        vectors.push(vec![chunk("a", "d", &[1.0, 0.0])]);
        vectors.push(vec![chunk("a", "d", &[0.0, 1.0])]);
        assert_eq!(vectors.len(), 1);
        assert_eq!(vectors.similarities(&[0.0, 1.0]).unwrap().unwrap(), [1.0]);
    }

    #[test]
    fn fast_dot_products_equal_plain_ones() {
        let mut seed = 7u64;
        let mut next = move || {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            ((seed >> 40) as f32 / (1u64 << 24) as f32) - 0.5
        };
        for dim in [1, 7, 16, 33, 384] {
            let matrix: Vec<f32> = (0..dim * 50).map(|_| next()).collect();
            let query: Vec<f32> = (0..dim).map(|_| next()).collect();
            let fast = dot_rows(&matrix, &query);
            assert_eq!(fast.len(), 50);
            for (row, score) in matrix.chunks(dim).zip(&fast) {
                let plain: f32 = row.iter().zip(&query).map(|(x, y)| x * y).sum();
                assert!(
                    (plain - score).abs() < 1e-4,
                    "dim {dim}: {plain} vs {score}"
                );
            }
        }
    }

    #[test]
    fn top_rows_are_the_best_in_order() {
        let scores = [0.1, 0.9, 0.5, 0.9, -1.0, 0.7];
        assert_eq!(top_rows(&scores, 3), [1, 3, 5]);
        assert_eq!(top_rows(&scores, 10), [1, 3, 5, 2, 0, 4]);
        assert!(top_rows(&scores, 0).is_empty());
    }
}
