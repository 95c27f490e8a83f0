"""Statistics over the humans: agreement (`agreement`, `gwet`, `agreement_summary`), individual
annotators and committees (`annotators`), and the interval over humans (`humans_interval`)."""
