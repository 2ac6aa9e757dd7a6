"""OAuth 2.0 as the service does it (apps, codes, grants, rotating refresh tokens, platform
tokens), the biller record a token belongs to, and the consent page's rules."""
