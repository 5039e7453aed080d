mod parser;
pub use parser::PostgresCompatibilityParser;
pub mod rules;
