//! A small dense row-major matrix for the hot path.
//!
//! Plants and controllers multiply tiny matrices (a handful of states) millions
//! of times. A flat `Vec<f64>` walked with slice iterators has no per-element
//! bounds checks and no hidden allocation; nalgebra is kept for the one thing
//! that needs real linear algebra (the matrix exponential of an observer's
//! discretisation) and for the tests' exact solutions.

use crate::error::ConfigError;
use crate::key_path::KeyPath;

/// Dense row-major matrix.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Matrix {
    rows: usize,
    cols: usize,
    data: Vec<f64>,
}

impl Matrix {
    pub(crate) fn zeros(rows: usize, cols: usize) -> Self {
        Matrix {
            rows,
            cols,
            data: vec![0.0; rows * cols],
        }
    }

    pub(crate) fn from_row_major(rows: usize, cols: usize, data: Vec<f64>) -> Self {
        debug_assert_eq!(data.len(), rows * cols);
        Matrix { rows, cols, data }
    }

    /// Builds a matrix from config rows, checking that every number is finite
    /// and that all rows have the same length.
    ///
    /// # Errors
    /// [`ConfigError::NotFinite`], or [`ConfigError::Shape`] for ragged rows.
    pub(crate) fn from_rows(key: &KeyPath, rows: &[Vec<f64>]) -> Result<Self, ConfigError> {
        let r = rows.len();
        let c = rows.first().map_or(0, Vec::len);
        let mut data = Vec::with_capacity(r * c);
        for (i, row) in rows.iter().enumerate() {
            if row.len() != c {
                return Err(ConfigError::Shape {
                    key: key.clone().at(i),
                    expected_rows: 1,
                    expected_cols: c,
                    found_rows: 1,
                    found_cols: row.len(),
                });
            }
            for (j, &v) in row.iter().enumerate() {
                if !v.is_finite() {
                    return Err(ConfigError::NotFinite {
                        key: key.clone().at(i).at(j),
                        value: v,
                    });
                }
                data.push(v);
            }
        }
        Ok(Matrix {
            rows: r,
            cols: c,
            data,
        })
    }

    /// Like [`from_rows`](Self::from_rows), and checks the shape.
    ///
    /// # Errors
    /// As `from_rows`, plus [`ConfigError::Shape`] when the shape differs.
    pub(crate) fn from_rows_shaped(
        key: &KeyPath,
        rows: &[Vec<f64>],
        expected_rows: usize,
        expected_cols: usize,
    ) -> Result<Self, ConfigError> {
        let m = Self::from_rows(key, rows)?;
        // An empty list has no columns to count: treat `[]` as 0 x anything.
        let found_cols = if m.rows == 0 { expected_cols } else { m.cols };
        if m.rows != expected_rows || found_cols != expected_cols {
            return Err(ConfigError::Shape {
                key: key.clone(),
                expected_rows,
                expected_cols,
                found_rows: m.rows,
                found_cols: m.cols,
            });
        }
        Ok(Matrix {
            rows: expected_rows,
            cols: expected_cols,
            data: m.data,
        })
    }

    pub(crate) fn rows(&self) -> usize {
        self.rows
    }

    pub(crate) fn cols(&self) -> usize {
        self.cols
    }

    pub(crate) fn data(&self) -> &[f64] {
        &self.data
    }

    pub(crate) fn get(&self, i: usize, j: usize) -> f64 {
        self.data[i * self.cols + j]
    }

    pub(crate) fn set(&mut self, i: usize, j: usize, v: f64) {
        self.data[i * self.cols + j] = v;
    }

    /// `y = self * x`.
    #[inline]
    pub(crate) fn mul_into(&self, x: &[f64], y: &mut [f64]) {
        debug_assert_eq!(x.len(), self.cols);
        debug_assert_eq!(y.len(), self.rows);
        if self.cols == 0 {
            y.fill(0.0);
            return;
        }
        for (yi, row) in y.iter_mut().zip(self.data.chunks_exact(self.cols)) {
            *yi = dot(row, x);
        }
    }

    /// `y += self * x`.
    #[inline]
    pub(crate) fn mul_add_into(&self, x: &[f64], y: &mut [f64]) {
        debug_assert_eq!(x.len(), self.cols);
        debug_assert_eq!(y.len(), self.rows);
        if self.cols == 0 {
            return;
        }
        for (yi, row) in y.iter_mut().zip(self.data.chunks_exact(self.cols)) {
            *yi += dot(row, x);
        }
    }

    /// `y -= self * x`.
    #[inline]
    pub(crate) fn mul_sub_into(&self, x: &[f64], y: &mut [f64]) {
        debug_assert_eq!(x.len(), self.cols);
        debug_assert_eq!(y.len(), self.rows);
        if self.cols == 0 {
            return;
        }
        for (yi, row) in y.iter_mut().zip(self.data.chunks_exact(self.cols)) {
            *yi -= dot(row, x);
        }
    }

    pub(crate) fn to_nalgebra(&self) -> nalgebra::DMatrix<f64> {
        nalgebra::DMatrix::from_row_slice(self.rows, self.cols, &self.data)
    }

    pub(crate) fn from_nalgebra(m: &nalgebra::DMatrix<f64>) -> Self {
        let mut out = Matrix::zeros(m.nrows(), m.ncols());
        for i in 0..m.nrows() {
            for j in 0..m.ncols() {
                out.set(i, j, m[(i, j)]);
            }
        }
        out
    }
}

/// Left-to-right dot product; the summation order is fixed so results are
/// reproducible bit for bit.
#[inline]
pub(crate) fn dot(a: &[f64], b: &[f64]) -> f64 {
    let mut s = 0.0;
    for (x, y) in a.iter().zip(b) {
        s += x * y;
    }
    s
}

/// Checks a config vector: length and finiteness.
///
/// # Errors
/// [`ConfigError::Length`] or [`ConfigError::NotFinite`].
pub(crate) fn check_vector(key: &KeyPath, v: &[f64], expected: usize) -> Result<(), ConfigError> {
    if v.len() != expected {
        return Err(ConfigError::Length {
            key: key.clone(),
            expected,
            found: v.len(),
        });
    }
    check_finite_all(key, v)
}

/// # Errors
/// [`ConfigError::NotFinite`] naming the first bad element.
pub(crate) fn check_finite_all(key: &KeyPath, v: &[f64]) -> Result<(), ConfigError> {
    match v.iter().position(|x| !x.is_finite()) {
        Some(i) => Err(ConfigError::NotFinite {
            key: key.clone().at(i),
            value: v[i],
        }),
        None => Ok(()),
    }
}

/// # Errors
/// [`ConfigError::NotFinite`].
pub(crate) fn check_finite(key: &KeyPath, v: f64) -> Result<(), ConfigError> {
    if v.is_finite() {
        Ok(())
    } else {
        Err(ConfigError::NotFinite {
            key: key.clone(),
            value: v,
        })
    }
}

/// # Errors
/// [`ConfigError::NotFinite`] or [`ConfigError::Invalid`] unless `v > 0`.
pub(crate) fn check_positive(key: &KeyPath, v: f64) -> Result<(), ConfigError> {
    check_finite(key, v)?;
    if v > 0.0 {
        Ok(())
    } else {
        Err(ConfigError::invalid(
            key,
            format!("must be positive, found {v}"),
        ))
    }
}

/// # Errors
/// [`ConfigError::NotFinite`] or [`ConfigError::Invalid`] unless `v >= 0`.
pub(crate) fn check_non_negative(key: &KeyPath, v: f64) -> Result<(), ConfigError> {
    check_finite(key, v)?;
    if v >= 0.0 {
        Ok(())
    } else {
        Err(ConfigError::invalid(
            key,
            format!("must not be negative, found {v}"),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multiplies_row_major() {
        let m = Matrix::from_rows(
            &KeyPath::key("m"),
            &[vec![1.0, 2.0], vec![3.0, 4.0], vec![5.0, 6.0]],
        )
        .unwrap();
        let mut y = [0.0; 3];
        m.mul_into(&[1.0, -1.0], &mut y);
        assert_eq!(y, [-1.0, -1.0, -1.0]);
        m.mul_add_into(&[1.0, 0.0], &mut y);
        assert_eq!(y, [0.0, 2.0, 4.0]);
        m.mul_sub_into(&[0.0, 1.0], &mut y);
        assert_eq!(y, [-2.0, -2.0, -2.0]);
    }

    #[test]
    fn rejects_ragged_and_misshapen_rows() {
        let e = Matrix::from_rows(&KeyPath::key("a"), &[vec![1.0, 2.0], vec![3.0]]).unwrap_err();
        assert_eq!(e.key().to_string(), "a[1]");
        let e = Matrix::from_rows_shaped(&KeyPath::key("k"), &[vec![1.0, 2.0]], 1, 3).unwrap_err();
        assert!(
            matches!(
                e,
                ConfigError::Shape {
                    expected_cols: 3,
                    found_cols: 2,
                    ..
                }
            ),
            "{e}"
        );
        let e = Matrix::from_rows(&KeyPath::key("a"), &[vec![f64::NAN]]).unwrap_err();
        assert_eq!(e.key().to_string(), "a[0][0]");
    }
}
