"""One router per section of the contract, plus the admin API and the consent page."""
