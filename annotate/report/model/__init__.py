"""The report's typed data (`schema`): what the report computes and every renderer reads."""
