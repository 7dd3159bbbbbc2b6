"""From trees to data to models: SFT and preference-pair extraction, evaluation, the self-evolution rounds."""
