"""Generic requests: what a question looks like when it is not about anyone's memory.

A sentence encoder's cosines do not say on their own whether a fact answers a question: a
general request ("how do I cook noodles", "write an SQL example") lands near the fact about
the subject's food or database about as closely as a real question about them lands near
its answer. What tells them apart is how close the question also comes to requests that
no memory answers. The local embedder raises each question's bar by its resemblance to
the sentences below (the mean of its three nearest: ``Embedder.relevance_bar`` in embedders.py), so a
fact must bear on the question more than small talk, world knowledge and homework do.

Written as kinds of request an assistant gets, in English and Chinese, not copied from
the recall set: tests/embeddings/test_eval_recall.py holds that none of these is one of
its questions. Changing the list changes relevant mode's bar; re-measure on the tuning
part (bench/embedders.py --sweep) before anything else.
"""
from __future__ import annotations

GENERIC_REQUESTS: tuple[str, ...] = (
    # small talk and assistant chores
    "Hello, how are you?", "Thanks, that helps.", "Tell me a joke.", "What time is it now?",
    "Translate this sentence into French.", "Summarize this article for me.", "Write a short poem about the sea.",
    "Set an alarm for 7 am.", "Play some relaxing music.",
    # world knowledge
    "What is the news today?", "Who won the football match last night?", "How many people live in India?",
    "When did the Second World War end?", "What is photosynthesis?", "How tall is Mount Everest?",
    "What is the largest ocean on Earth?", "Who painted the Mona Lisa?", "How far is the Moon from the Earth?",
    "What is the exchange rate of the dollar to the euro?", "Will it rain this weekend?",
    # how-to and homework
    "How do I fix this error in my code?", "Show me how to sort a list in JavaScript.",
    "What does this regular expression match?", "Write an example of a for loop in Java.",
    "What is the square root of 144?", "Solve this equation for x.", "Give me a recipe for dinner.",
    "How long should I boil an egg?", "Suggest a good book to read.", "Which movie won the Oscar this year?",
    "How do I change a flat tire?",
    # the same kinds in Chinese
    "你好，最近怎么样", "谢谢你的帮助", "给我讲个笑话", "现在几点了", "帮我翻译这句话", "帮我总结这篇文章",
    "今天有什么新闻", "昨晚的球赛谁赢了", "地球到月亮有多远", "世界上最高的山是哪座", "二战是哪一年结束的",
    "这段代码为什么报错", "怎么用 Python 读取文件", "帮我写一个排序算法的例子", "给我举个例子说明一下",
    "帮我解这道数学题", "教我做一道家常菜", "推荐几本好书", "最近有什么好看的电视剧", "周末会下雨吗",
    "人民币兑美元的汇率是多少", "帮我写一首诗",
)
