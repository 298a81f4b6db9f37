"""Who is calling: principals, their roles, and the catalogs and skills each may see (pure)."""
