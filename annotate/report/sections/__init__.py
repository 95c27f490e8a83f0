"""The report's sections that are computed beside the headline: catch items, early stop,
flags, the datasheet, gold suspects and models on the same items."""
