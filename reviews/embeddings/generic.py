"""Generic requests: what a question looks like when it is not about anyone's memory.

A sentence encoder's cosines do not say on their own whether a fact answers a question: a
general request ("how do I cook noodles", "write an SQL example") lands near the fact about
the subject's food or database about as closely as a real question about them lands near
its answer. What tells them apart is how close the question also comes to requests that
no memory answers. The local embedder raises each question's bar by its resemblance to
the sentences below (the mean of its three nearest: ``Embedder.relevance_bar`` in
embedders.py), so a fact must bear on the question more than such requests do.

How the list is made, so that it covers the requests an assistant gets rather than the
ones a test set happened to ask: first a fixed list of broad kinds of request
(``RequestKind``: greetings and small talk, chores, news, weather, sport, geography,
history, science explanations, maths, coding, cooking, health information, travel,
shopping, entertainment, language learning and translation, writing help, money, devices
and software, study and career), then the same number of requests for every kind: three
in English and three in Chinese. None is copied from the recall set
(tests/embeddings/test_eval_recall.py holds that none of these is one of its questions)
or from the off-topic evaluation list (reviews/fixtures/eval/off_topic_eval.jsonl, which
also asks kinds this list leaves out, to show how far the bar carries beyond them).
Changing the list changes relevant mode's bar; re-measure on the tuning part
(bench/embedders.py --sweep) before anything else.
"""
from __future__ import annotations

from enum import StrEnum


class RequestKind(StrEnum):
    """The kinds of request the generic list covers, each with as many requests."""

    GREETING = "greeting"
    CHORE = "chore"
    NEWS = "news"
    WEATHER = "weather"
    SPORT = "sport"
    GEOGRAPHY = "geography"
    HISTORY = "history"
    SCIENCE = "science"
    MATHS = "maths"
    CODING = "coding"
    COOKING = "cooking"
    HEALTH = "health"
    TRAVEL = "travel"
    SHOPPING = "shopping"
    ENTERTAINMENT = "entertainment"
    LANGUAGE = "language"
    WRITING = "writing"
    MONEY = "money"
    DEVICES = "devices"
    CAREER = "career"


# Three in English, then three in Chinese, for every kind.
REQUESTS_BY_KIND: dict[RequestKind, tuple[str, ...]] = {
    RequestKind.GREETING: (
        "Hello, how are you?", "Thanks, that helps.", "Good night, talk to you tomorrow.",
        "你好，最近怎么样", "谢谢你的帮助", "早上好呀",
    ),
    RequestKind.CHORE: (
        "Set an alarm for 7 am.", "What time is it now?", "Start a stopwatch.",
        "现在几点了", "帮我定一个明早六点的闹钟", "今天是几月几号",
    ),
    RequestKind.NEWS: (
        "What is the news today?", "Any updates on the election results?", "What happened on the stock market this morning?",
        "今天有什么新闻", "最近有什么科技新闻", "今天的热搜是什么",
    ),
    RequestKind.WEATHER: (
        "Will it rain this weekend?", "What's the temperature outside?", "Is there a storm warning for the coast?",
        "周末会下雨吗", "今天气温多少度", "这周会有台风吗",
    ),
    RequestKind.SPORT: (
        "Who won the football match last night?", "When do the next Olympic Games start?", "What are the rules of tennis?",
        "昨晚的球赛谁赢了", "今年 NBA 总冠军是谁", "乒乓球比赛怎么计分",
    ),
    RequestKind.GEOGRAPHY: (
        "How tall is Mount Everest?", "What is the largest ocean on Earth?", "How many people live in India?",
        "世界上最高的山是哪座", "黄河有多长", "中国有多少个省",
    ),
    RequestKind.HISTORY: (
        "When did the Second World War end?", "Who built the pyramids?", "What caused the French Revolution?",
        "二战是哪一年结束的", "唐朝是怎么灭亡的", "丝绸之路是什么",
    ),
    RequestKind.SCIENCE: (
        "What is photosynthesis?", "How do magnets work?", "What happens in a chemical reaction?",
        "地球到月亮有多远", "什么是 DNA", "彩虹是怎么形成的",
    ),
    RequestKind.MATHS: (
        "What is the square root of 144?", "Solve this equation for x.", "What is the area of a circle with radius 3?",
        "帮我解这道数学题", "一百除以七等于多少", "什么是质数",
    ),
    RequestKind.CODING: (
        "How do I fix this error in my code?", "Show me how to sort a list in JavaScript.", "Write an example of a for loop in Java.",
        "这段代码为什么报错", "怎么用 Python 读取文件", "帮我写一个排序算法的例子",
    ),
    RequestKind.COOKING: (
        "Give me a recipe for dinner.", "How long should I boil an egg?", "How do I bake bread at home?",
        "教我做一道家常菜", "饺子怎么包", "蛋糕要烤多久",
    ),
    RequestKind.HEALTH: (
        "What are the symptoms of the flu?", "How many hours of sleep does an adult need?", "How can I lower my blood pressure?",
        "发烧了怎么办", "每天走多少步合适", "维生素 C 有什么作用",
    ),
    RequestKind.TRAVEL: (
        "What's the best time of year to visit Paris?", "How do I get from the airport to the city centre?",
        "What should I pack for a beach holiday?",
        "去云南旅游有什么推荐", "高铁票怎么退", "出国旅游要带什么",
    ),
    RequestKind.SHOPPING: (
        "Which smartphone has the best camera?", "Where can I buy cheap furniture?", "Compare these two vacuum cleaners.",
        "哪款耳机性价比高", "网上买的衣服怎么退货", "推荐一款好用的电饭煲",
    ),
    RequestKind.ENTERTAINMENT: (
        "Suggest a good book to read.", "Which movie won the Oscar this year?", "Tell me a joke.",
        "给我讲个笑话", "最近有什么好看的电视剧", "推荐一款好玩的手机游戏",
    ),
    RequestKind.LANGUAGE: (
        "Translate this sentence into French.", "What is the past tense of 'run'?", "How do you say 'good luck' in German?",
        "帮我翻译这句话", "这个成语是什么意思", "英语的现在完成时怎么用",
    ),
    RequestKind.WRITING: (
        "Summarize this article for me.", "Write a short poem about the sea.", "Help me write an email to decline an invitation.",
        "帮我总结这篇文章", "帮我写一首诗", "帮我润色一下这段话",
    ),
    RequestKind.MONEY: (
        "What is the exchange rate of the dollar to the euro?", "How does compound interest work?", "Is gold a good investment?",
        "人民币兑美元的汇率是多少", "怎么开一个银行账户", "比特币是什么",
    ),
    RequestKind.DEVICES: (
        "How do I take a screenshot on Windows?", "My phone won't charge, what should I do?", "How do I update my browser?",
        "电脑开不了机怎么办", "怎么连接蓝牙耳机", "Excel 怎么合并单元格",
    ),
    RequestKind.CAREER: (
        "How do I ask my boss for a raise?", "Which universities are best for computer science?",
        "How can I concentrate better while studying?",
        "考研要准备什么", "怎么提高工作效率", "怎么写一份好的年终总结",
    ),
}

GENERIC_REQUESTS: tuple[str, ...] = tuple(request for kind in RequestKind for request in REQUESTS_BY_KIND[kind])
