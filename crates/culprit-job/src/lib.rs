//! lkp-tests job files: loading, param conventions, matrix expansion, split, path_params, stable ids (being written).
