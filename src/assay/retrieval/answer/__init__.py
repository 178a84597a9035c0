"""The answer stage: asking a chat model to answer each question from the retrieved passages."""
